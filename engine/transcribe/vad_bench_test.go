package transcribe

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"hark/engine/vad"
	"hark/mlx/mlxtest"
)

// BenchmarkSilence10min transcribes a file of 10 minutes of digital
// silence on the tiny golden model with VAD (on by default: Silero finds
// no speech, Whisper never runs) and without, interleaved in one loop so
// both see the same machine load; vad-% is the first as a share of the
// second. Without VAD, Whisper decodes all 20 windows greedily: with
// OpenAI's default fallback it also retries each at five temperatures
// (best of 5), which takes many times longer (over 20 minutes on a busy
// 2-core VM), so the share against today's default is smaller still.
func BenchmarkSilence10min(b *testing.B) {
	m, err := Open(filepath.Join(mlxtest.Assets(b, "whisper", "golden"), "model"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	path := filepath.Join(b.TempDir(), "silence.wav")
	if err := writeWAV(path, make([]float32, 10*60*16000)); err != nil {
		b.Fatal(err)
	}
	if _, err := vad.Load(); err != nil { // once per process, as in the app
		b.Fatal(err)
	}
	var withVAD, without time.Duration
	segs := 0
	// VAD runs before and after Whisper in each iteration (it is short,
	// so a load spike would skew a single run); its time is the mean.
	vadRun := func() {
		o := DefaultOptions()
		o.Language = "en"
		vo := vad.DefaultOptions()
		o.VAD = &vo
		t0 := time.Now()
		res, err := m.TranscribeFile(context.Background(), path, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Segments) != 0 {
			b.Fatalf("VAD: %d segments in silence", len(res.Segments))
		}
		withVAD += time.Since(t0) / 2
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vadRun()
		o := DefaultOptions()
		o.Language = "en"
		o.Temperatures = []float64{0}
		t1 := time.Now()
		res, err := m.TranscribeFile(context.Background(), path, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		without += time.Since(t1)
		segs += len(res.Segments)
		vadRun()
	}
	n := float64(b.N)
	b.ReportMetric(withVAD.Seconds()/n, "vad-s")
	b.ReportMetric(without.Seconds()/n, "novad-s")
	b.ReportMetric(100*withVAD.Seconds()/without.Seconds(), "vad-%")
	b.ReportMetric(float64(segs)/n, "novad-segments")
}
