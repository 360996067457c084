package transcribe

import (
	"bufio"
	"context"
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

// writeNoiseWAV writes minutes of quiet noise (a few LSB) as an 8 kHz
// 16-bit mono WAV, so reading it also resamples, block by block without
// holding it.
func writeNoiseWAV(t *testing.T, minutes int) string {
	t.Helper()
	const rate = 8000
	p := filepath.Join(t.TempDir(), "long.wav")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// One second of noise, repeated: generating all of it would cost more
	// than the test.
	block := make([]byte, 2*rate)
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < len(block); i += 2 {
		binary.LittleEndian.PutUint16(block[i:], uint16(int16(rng.Intn(9)-4)))
	}
	seconds := 60 * minutes
	dataLen := uint32(seconds * len(block))
	w := bufio.NewWriterSize(f, 1<<20)
	le := binary.LittleEndian
	w.WriteString("RIFF")
	binary.Write(w, le, 36+dataLen)
	w.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(w, le, v)
	}
	w.WriteString("data")
	binary.Write(w, le, dataLen)
	for range seconds {
		w.Write(block)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// liveHeap is the heap still reachable, after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

type fileMemory struct {
	minutes  int
	peak     uint64 // largest live-heap growth seen at a progress call
	scans    int    // first-pass progress calls
	windows  int    // second-pass progress calls
	lastDone time.Duration
	total    time.Duration
	elapsed  time.Duration
}

// transcribeMemory transcribes minutes of generated audio and samples the
// live heap at every progress call of both passes.
func transcribeMemory(t *testing.T, m *Model, minutes int) fileMemory {
	t.Helper()
	p := writeNoiseWAV(t, minutes)
	defer os.Remove(p)
	r := fileMemory{minutes: minutes}
	base := liveHeap()
	sample := func() {
		if h := liveHeap(); h > base {
			r.peak = max(r.peak, h-base)
		}
	}
	o := DefaultOptions()
	o.Language = "en"
	o.ScanProgress = func(done, total time.Duration) { r.scans++; sample() }
	o.Progress = func(done, total time.Duration) {
		r.windows++
		r.lastDone, r.total = done, total
		sample()
	}
	start := time.Now()
	res, err := m.TranscribeFile(context.Background(), p, o, nil)
	r.elapsed = time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Duration(minutes) * time.Minute
	if res.Duration != want || r.total != want || r.lastDone != want {
		t.Fatalf("%d min: duration %v, progress ended at %v of %v", minutes, res.Duration, r.lastDone, r.total)
	}
	if len(res.Segments) != 0 {
		t.Errorf("%d min of noise: %d segments", minutes, len(res.Segments))
	}
	return r
}

// Memory stays flat however long the file: the model without speech
// skips every window cheaply, so a 20-minute and a 60-minute file are
// decoded window by window to the end, and the live heap grows by the
// same few MB for both; the whole-file path would hold 230 MB of samples
// and 115 MB of mel for the hour. HARK_LONG_AUDIO=1 runs 20 minutes
// against 3 hours.
func TestTranscribeFileMemoryFlat(t *testing.T) {
	mlxtest.NoLeaks(t)
	short, long := 20, 60
	switch {
	case os.Getenv("HARK_LONG_AUDIO") == "1":
		long = 180
	case testing.Short():
		short, long = 3, 9
	}
	m := cheapSpeechlessModel(t)
	var res []fileMemory
	for _, minutes := range []int{short, long} {
		r := transcribeMemory(t, m, minutes)
		t.Logf("%3d min: peak live-heap growth %.2f MB over %d scan and %d window reports (%v)",
			minutes, float64(r.peak)/1e6, r.scans, r.windows, r.elapsed.Round(time.Second))
		if wantWindows := minutes * 2; r.windows != wantWindows {
			t.Errorf("%d min: %d windows, want %d", minutes, r.windows, wantWindows)
		}
		res = append(res, r)
	}
	const slack = 4 << 20
	if s, l := res[0].peak, res[1].peak; float64(l) > 1.5*float64(s)+slack {
		t.Errorf("memory grows with length: %.2f MB for %d min, %.2f MB for %d min", float64(s)/1e6, short, float64(l)/1e6, long)
	}
	// Far below the hour's mel alone (115 MB), let alone its samples.
	for _, r := range res {
		if r.peak > 24<<20 {
			t.Errorf("%d min: live heap grew by %.2f MB", r.minutes, float64(r.peak)/1e6)
		}
	}
}

// cheapSpeechlessModel is speechlessModel with one encoder layer of one
// head: the encoder's attention softmax is most of a skipped window's
// cost, and the decoder's fixed output does not depend on it.
func cheapSpeechlessModel(t *testing.T) *Model {
	return speechlessModelConfig(t, func(c map[string]any) {
		c["encoder_layers"], c["encoder_attention_heads"] = 1, 1
	}, func(name string) bool { return !strings.HasPrefix(name, "model.encoder.layers.1.") })
}
