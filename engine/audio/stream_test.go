package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A stereo file: channel 1 and 2 are picked exactly, channel 0 averages,
// channel 3 is refused with a message.
func TestStreamChannels(t *testing.T) {
	l, r := sine(4000, 16000, 300, 0.4), sine(4000, 16000, 500, 0.3)
	inter := make([]float32, 8000)
	for i := range l {
		inter[2*i], inter[2*i+1] = l[i], r[i]
	}
	p := writeTemp(t, "st.wav", wavSpec{tag: wavFloat, channels: 2, rate: 16000, bits: 32, dataSize: -1, data: encodeSamples(inter, wavFloat, 32)}.bytes())
	for ch, want := range map[int]func(i int) float32{
		1: func(i int) float32 { return l[i] },
		2: func(i int) float32 { return r[i] },
		0: func(i int) float32 { return (l[i] + r[i]) * 0.5 },
	} {
		got, err := Decode(p, Options{Channel: ch})
		if err != nil || len(got) != len(l) {
			t.Fatalf("channel %d: %d samples, %v", ch, len(got), err)
		}
		for i := range got {
			if d := got[i] - want(i); d > 1e-7 || d < -1e-7 {
				t.Fatalf("channel %d sample %d: %v want %v", ch, i, got[i], want(i))
			}
		}
	}
	if _, err := Open(p, Options{Channel: 3}); err == nil || !strings.Contains(err.Error(), "channel 3") || !strings.HasPrefix(err.Error(), p) {
		t.Fatalf("channel 3 of stereo: %v", err)
	}
}

// Next behaves like io.Reader: short reads are fine, io.EOF is sticky, an
// empty dst reads nothing.
func TestStreamNextSemantics(t *testing.T) {
	p := writeTemp(t, "n.wav", wavSpec{tag: wavPCM, channels: 1, rate: 8000, bits: 16, dataSize: -1, data: pcm16(sine(8000, 8000, 440, 0.5))}.bytes())
	s, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if in := s.Info(); in.SampleRate != 8000 || in.File != p {
		t.Fatalf("Info %+v", in)
	}
	if n, err := s.Next(nil); n != 0 || err != nil {
		t.Fatalf("Next(nil) = %d, %v", n, err)
	}
	total := 0
	buf := make([]float32, 999)
	for {
		n, err := s.Next(buf)
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("Next returned 0 without an error")
		}
	}
	if total != 16000 || s.Pos() != 16000 {
		t.Fatalf("1 s at 8 kHz gave %d samples at 16 kHz (Pos %d)", total, s.Pos())
	}
	if n, err := s.Next(buf); n != 0 || err != io.EOF {
		t.Fatalf("Next after EOF = %d, %v", n, err)
	}
}

// writeLongWAV writes seconds of 8 kHz 16-bit mono, one second at a time,
// so the test itself does not hold the file in memory.
func writeLongWAV(t *testing.T, seconds int, streamed bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "long.wav")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	block := pcm16(sine(8000, 8000, 440, 0.5))
	dataLen := uint32(seconds * len(block))
	hdr := wavSpec{tag: wavPCM, channels: 1, rate: 8000, bits: 16, dataSize: int64(dataLen)}.bytes()
	if streamed {
		binary.LittleEndian.PutUint32(hdr[len(hdr)-4:], 0xFFFFFFFF)
	}
	w.Write(hdr)
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

// streamMemory decodes path to the end in 30 s windows, as the Whisper loop
// will, and reports the bytes allocated meanwhile and the peak heap growth.
func streamMemory(t *testing.T, path string) (samples int64, alloc, peak uint64) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, baseAlloc := ms.HeapInuse, ms.TotalAlloc
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	win := make([]float32, 30*SampleRate)
	for i := 0; ; i++ {
		n, err := s.Next(win)
		samples += int64(n)
		if i%20 == 0 {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base {
				peak = max(peak, ms.HeapInuse-base)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms)
	return samples, ms.TotalAlloc - baseAlloc, peak
}

// Memory stays flat however long the file: a 30-minute file (29 MB of
// WAV, resampled 8 kHz -> 16 kHz) allocates no more than a 5-minute one,
// and the heap never grows by more than a few MB. HARK_LONG_AUDIO=1 runs 30
// minutes against the full 3 hours (about 35 s on a loaded 2-core box);
// -short runs 2 against 12 minutes.
func TestStreamMemoryFlat(t *testing.T) {
	short, long := 5*60, 30*60
	switch {
	case os.Getenv("HARK_LONG_AUDIO") == "1":
		short, long = 30*60, 3*3600
	case testing.Short():
		short, long = 2*60, 12*60
	}
	type result struct {
		samples     int64
		alloc, peak uint64
		secs        int
	}
	var res []result
	for i, secs := range []int{short, long} {
		p := writeLongWAV(t, secs, i == 1) // the long one also as a streamed WAV
		n, alloc, peak := streamMemory(t, p)
		os.Remove(p)
		if want := int64(secs) * SampleRate; n != want {
			t.Fatalf("%d s: %d samples, want %d", secs, n, want)
		}
		t.Logf("%5d s of audio: allocated %.2f MB in total, peak heap growth %.2f MB", secs, float64(alloc)/1e6, float64(peak)/1e6)
		res = append(res, result{n, alloc, peak, secs})
	}
	const bound = 8 << 20
	for _, r := range res {
		if r.peak > bound || r.alloc > bound {
			t.Errorf("%d s: allocated %d bytes, peak heap growth %d; want both under %d", r.secs, r.alloc, r.peak, bound)
		}
	}
	if grow := int64(res[1].alloc) - int64(res[0].alloc); grow > 1<<20 {
		t.Errorf("allocation grows with length: %d more bytes for %dx the audio", grow, res[1].secs/res[0].secs)
	}
}

// Zero-length audio is an error naming the file, not an empty success.
func TestStreamEmpty(t *testing.T) {
	p := writeTemp(t, "empty.wav", wavSpec{tag: wavPCM, channels: 1, rate: 16000, bits: 16, dataSize: -1}.bytes())
	x, err := Decode(p, Options{})
	if !errors.Is(err, ErrEmpty) || len(x) != 0 || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("empty WAV: %d samples, %v", len(x), err)
	}
}

// Float files may hold NaN, infinities or values past full scale: the
// stream clamps them so nothing downstream sees a non-finite sample.
func TestStreamSanitizesFloat(t *testing.T) {
	nan := float32(math.NaN())
	x := []float32{0.5, nan, float32(math.Inf(1)), -3, float32(math.Inf(-1)), -0.25}
	p := writeTemp(t, "f.wav", wavSpec{tag: wavFloat, channels: 1, rate: 16000, bits: 32, dataSize: -1, data: encodeSamples(x, wavFloat, 32)}.bytes())
	got, err := Decode(p, Options{})
	if want := []float32{0.5, 0, 1, -1, -1, -0.25}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v (%v), want %v", got, err, want)
	}
}
