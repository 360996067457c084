package audio

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkResample reports throughput in seconds of audio per second.
func BenchmarkResample(b *testing.B) {
	for _, in := range []int{8000, 44100, 48000} {
		b.Run(itoa(in), func(b *testing.B) {
			x := sine(in, in, 1000, 0.5)
			rng := rand.New(rand.NewPCG(1, 1))
			b.SetBytes(int64(len(x) * 4))
			for b.Loop() {
				resampleAll(x, in, 16000, rng)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
