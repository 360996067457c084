package transcribe

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

func silenceAndNoise() map[string][]float32 {
	silence := make([]float32, 16000*12)
	noise := make([]float32, 16000*12)
	rng := rand.New(rand.NewSource(1))
	for i := range noise {
		noise[i] = float32(rng.NormFloat64() * 0.05)
	}
	return map[string][]float32{"silence": silence, "noise": noise}
}

func TestSilenceAndNoise(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := speechlessModel(t)
	t.Run("skipped", func(t *testing.T) { silenceSkipped(t, m) })
	t.Run("blank without threshold", func(t *testing.T) { silenceBlankSegments(t, m) })
}

func silenceSkipped(t *testing.T, m *Model) {
	for name, samples := range silenceAndNoise() {
		o := DefaultOptions() // with temperature fallback and the 0.6 no-speech threshold
		o.Language = "en"
		var last, total time.Duration
		o.Progress = func(d, t time.Duration) { last, total = d, t }
		res, err := m.Transcribe(context.Background(), samples, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Segments) != 0 || res.Text != "" {
			t.Errorf("%s: invented text %q in %d segments", name, res.Text, len(res.Segments))
		}
		if last != 12*time.Second || total != 12*time.Second {
			t.Errorf("%s: progress ended at %v of %v", name, last, total)
		}
	}
}

func silenceBlankSegments(t *testing.T, m *Model) {
	for name, samples := range silenceAndNoise() {
		o := DefaultOptions()
		o.Language = "en"
		o.Temperatures = []float64{0}
		o.NoSpeechThreshold = None
		res, err := m.Transcribe(context.Background(), samples, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The window ends at once (<|t|> then end-of-text): one segment
		// from the window start to that lone timestamp (at most
		// max_initial_timestamp), blank, so cleared to no tokens.
		if len(res.Segments) != 1 {
			t.Fatalf("%s: %d segments, want 1", name, len(res.Segments))
		}
		s := res.Segments[0]
		if s.Text != "" || len(s.Tokens) != 0 || res.Text != "" {
			t.Errorf("%s: segment %+v, text %q", name, s, res.Text)
		}
		if s.StartSec != 0 || s.EndSec > 1+1e-9 {
			t.Errorf("%s: segment spans %v-%v", name, s.StartSec, s.EndSec)
		}
		if !(s.NoSpeechProb > 0.6) || !(s.AvgLogprob < -1) {
			t.Errorf("%s: no_speech_prob %v avg_logprob %v", name, s.NoSpeechProb, s.AvgLogprob)
		}
	}
}
