package audio

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// resampleAll runs x through a resampler in uneven chunks, as a Stream does.
func resampleAll(x []float32, in, out int, rng *rand.Rand) []float32 {
	r := newResampler(in, out)
	var y []float32
	for len(x) > 0 {
		n := min(len(x), 1+rng.IntN(5000))
		r.push(x[:n])
		x = x[n:]
		y = r.pull(y)
	}
	r.finish()
	return r.pull(y)
}

// errorDB is the RMS error of got against the analytic sine at the output
// rate, relative to the sine's RMS, in dB, over [skip, len-skip).
func errorDB(got []float32, rate int, freq, amp float64, skip int) float64 {
	var se, ss float64
	for n := skip; n < len(got)-skip; n++ {
		want := amp * math.Sin(2*math.Pi*freq*float64(n)/float64(rate))
		d := float64(got[n]) - want
		se += d * d
		ss += want * want
	}
	return 10 * math.Log10(se/ss)
}

// A 1 kHz sine converted to 16 kHz matches the analytic sine to better than
// -60 dB away from the edges, from every common rate, and the output length
// is exactly ceil(n * 16000 / rate).
func TestResampleSineAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, in := range []int{44100, 48000, 22050, 8000, 32000, 11025, 96000, 16001} {
		x := sine(in, in, 1000, 0.5) // one second
		y := resampleAll(x, in, 16000, rng)
		if want := (len(x)*16000 + in - 1) / in; len(y) != want {
			t.Fatalf("%d Hz: %d output samples, want %d", in, len(y), want)
		}
		db := errorDB(y, 16000, 1000, 0.5, 1600)
		t.Logf("%6d Hz -> 16 kHz: error %.1f dB", in, db)
		if db > -60 {
			t.Errorf("%d Hz -> 16 kHz: error %.1f dB, want < -60", in, db)
		}
	}
}

// Content above the new Nyquist rate must be removed, not folded back:
// a 12 kHz tone at 44.1 kHz would alias to 4 kHz under linear interpolation.
func TestResampleRejectsAliases(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, f := range []float64{8800, 12000, 20000} {
		x := sine(44100, 44100, f, 0.5)
		y := resampleAll(x, 44100, 16000, rng)
		var e float64
		for _, v := range y[1600 : len(y)-1600] {
			e += float64(v) * float64(v)
		}
		rms := math.Sqrt(e / float64(len(y)-3200))
		db := 20 * math.Log10(rms/(0.5/math.Sqrt2))
		t.Logf("%.0f Hz tone leaks at %.1f dB", f, db)
		if db > -60 {
			t.Errorf("%.0f Hz tone leaks at %.1f dB, want < -60", f, db)
		}
	}
}

// Chunking must not change a single output sample.
func TestResampleChunkingInvariant(t *testing.T) {
	x := make([]float32, 30000)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 0.1)
	}
	a := resampleAll(x, 44100, 16000, rand.New(rand.NewPCG(1, 1)))
	b := resampleAll(x, 44100, 16000, rand.New(rand.NewPCG(2, 2)))
	if !slices.Equal(a, b) {
		t.Fatal("output depends on how input was chunked")
	}
}

// A rate pair whose reduced ratio has a huge numerator takes the per-sample
// coefficient path; it must agree with the analytic sine just as well.
func TestResampleOddRatio(t *testing.T) {
	in := 44101 // 16000/44101 is already in lowest terms: 16000 phases
	r := newResampler(in, 16000)
	if r.table != nil {
		t.Fatalf("expected the slow path for L=%d", r.l)
	}
	y := resampleAll(sine(in/4, in, 1000, 0.5), in, 16000, rand.New(rand.NewPCG(3, 3)))
	if db := errorDB(y, 16000, 1000, 0.5, 800); db > -60 {
		t.Fatalf("error %.1f dB", db)
	}
}
