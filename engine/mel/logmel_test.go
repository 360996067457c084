package mel

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Segment is pad_or_trim(mel[:, seek:seek+size], 3000): frames copied,
// the rest 0.0 (not the floor), cut at 3000.
func TestSegment(t *testing.T) {
	s := &Spectrogram{NMels: 2, NFrames: 5000, Data: make([]float32, 2*5000)}
	for i := range s.Data {
		s.Data[i] = float32(i + 1)
	}
	g := s.Segment(4000, 1000)
	if g.NFrames != NFrames || g.NMels != 2 {
		t.Fatalf("shape %dx%d", g.NMels, g.NFrames)
	}
	for m := range 2 {
		for tt := range NFrames {
			want := float32(0)
			if tt < 1000 {
				want = s.At(m, 4000+tt)
			}
			if g.At(m, tt) != want {
				t.Fatalf("mel %d frame %d = %v, want %v", m, tt, g.At(m, tt), want)
			}
		}
	}
	if g := s.Segment(0, 4000); g.At(1, 2999) != s.At(1, 2999) {
		t.Fatal("a size over 3000 must be cut to 3000 frames")
	}
	if g := s.Segment(4990, 3000); g.At(0, 9) != s.At(0, 4999) || g.At(0, 10) != 0 {
		t.Fatal("a segment past the end must stop at the last frame")
	}
}

// The log-mel of silence is the constant floor; of a tone, its peak band
// sits where the tone is and the dynamic range is capped at 8 (log10).
func TestLogMelShapeAndRange(t *testing.T) {
	x := make([]float32, 16000)
	for i := range x {
		x[i] = float32(0.5 * math.Sin(2*math.Pi*1000*float64(i)/SampleRate))
	}
	s, err := LogMel(x, 80, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.NFrames != 100 || len(s.Data) != 80*100 {
		t.Fatalf("1 s gave %d frames", s.NFrames)
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range s.Data {
		lo, hi = min(lo, v), max(hi, v)
	}
	if d := hi - lo; d > 2.0001 { // 8 log10 units / 4
		t.Fatalf("dynamic range %v exceeds 2", d)
	}
	best, bestM := float32(-10), -1
	for m := range 80 {
		if v := s.At(m, 50); v > best {
			best, bestM = v, m
		}
	}
	// 1 kHz is 15 on the Slaney scale and 8 kHz is 45.25; band m is centred
	// at (m+1)*45.25/81, so the tone lands in band 15*81/45.25-1 = 25.9.
	if bestM < 24 || bestM > 28 {
		t.Fatalf("1 kHz tone peaks in mel band %d", bestM)
	}
	silent, err := Window(nil, 80)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range silent.Data {
		if v != silent.Data[0] || math.Abs(float64(v)-(-10+4)/4.0) > 1e-6 {
			t.Fatalf("silence gives %v, want the floor %v", v, (-10+4)/4.0)
		}
	}
}

func TestLogMelErrors(t *testing.T) {
	if _, err := LogMel(make([]float32, 200), 80, 0); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("200 samples: %v", err)
	}
	if _, err := LogMel(make([]float32, 1000), 0, 0); err == nil {
		t.Error("0 mel bands accepted")
	}
	if _, err := LogMel(make([]float32, 1000), 80, -1); err == nil {
		t.Error("negative padding accepted")
	}
	if _, err := FiltersFromDense(80, make([]float32, 10)); err == nil {
		t.Error("wrong-size filter matrix accepted")
	}
}

func npyBytes(header string, data []byte) []byte {
	h := header
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), data...)
}

func TestReadNPY(t *testing.T) {
	f4 := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40} // 1.0, 2.0
	a, err := ReadNPY(bytes.NewReader(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4)))
	if err != nil || len(a.Shape) != 1 || a.Shape[0] != 2 || a.Data[0] != 1 || a.Data[1] != 2 {
		t.Fatalf("f4: %+v, %v", a, err)
	}
	f8 := []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}
	a, err = ReadNPY(bytes.NewReader(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", f8)))
	if err != nil || a.Data[0] != 1 || len(a.Shape) != 2 {
		t.Fatalf("f8: %+v, %v", a, err)
	}
	for _, c := range []struct{ name, hdr, want string }{
		{"int", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", "dtype"},
		{"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran"},
		{"huge", "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }", "too large"},
		{"short", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "reading 3 values"},
		{"garbage", "hello", "malformed"},
	} {
		if _, err := ReadNPY(bytes.NewReader(npyBytes(c.hdr, f4))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := ReadNPY(strings.NewReader("PK\x03\x04")); err == nil {
		t.Error("non-npy accepted")
	}
}

// Frames are spread over the cores; the spectrogram must be bit-identical
// whatever the number of workers.
func TestLogMelWorkersAgree(t *testing.T) {
	x := make([]float32, 3*NSamples/2)
	for i := range x {
		x[i] = float32(0.3*math.Sin(float64(i)*0.05) + 0.1*math.Sin(float64(i*i)*1e-4))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref []float32
	for _, procs := range []int{1, 2, 3, 7} {
		runtime.GOMAXPROCS(procs)
		s, err := LogMelPadded(x, 80)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = s.Data
		} else if !slices.Equal(s.Data, ref) {
			t.Fatalf("GOMAXPROCS=%d changes the spectrogram", procs)
		}
	}
}
