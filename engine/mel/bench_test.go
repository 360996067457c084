package mel

import (
	"math"
	"testing"
)

func BenchmarkLogMel30s(b *testing.B) {
	audio := make([]float32, NSamples)
	for i := range audio {
		audio[i] = float32(0.3*math.Sin(2*math.Pi*440*float64(i)/SampleRate) + 0.01*math.Sin(float64(i*i)))
	}
	if _, err := Window(audio, 80); err != nil { // builds the filter cache
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Window(audio, 80); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRealFFT400(b *testing.B) {
	f, _ := newRealFFT(NFFT)
	x := make([]float64, NFFT)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	p := make([]float64, Bins)
	for b.Loop() {
		f.power(p, x)
	}
}
