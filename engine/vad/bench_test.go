package vad

import (
	"math"
	"testing"
)

// BenchmarkScore60s scores one minute of audio (a tone with noise) and
// reports how many times faster than real time that is.
func BenchmarkScore60s(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float32, 60*SampleRate)
	for i := range x {
		x[i] = float32(0.2*math.Sin(float64(i)*0.07) + 0.01*math.Sin(float64(i*i%991)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p := Probs(m, x); len(p) != len(x)/Frame+1 && len(p) != len(x)/Frame {
			b.Fatalf("%d frames", len(p))
		}
	}
	b.ReportMetric(60*float64(b.N)/b.Elapsed().Seconds(), "x-realtime")
}
