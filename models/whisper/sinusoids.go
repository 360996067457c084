package whisper

import (
	"encoding/json"
	"math"
)

// Sinusoids is OpenAI's encoder positional embedding, [length, channels]
// row-major: sin(position*timescale) in the first half of the channels,
// cos in the second, timescales geometric from 1 to 1/10000. It is
// computed in float64; torch's float32 buffer (stored by Hugging Face
// checkpoints) is off from the exact values by up to ~1e-4 at the last
// positions because the angle is rounded to float32 before sin/cos.
func Sinusoids(length, channels int) []float32 {
	half := channels / 2
	inc := math.Log(10000) / float64(half-1)
	out := make([]float32, length*channels)
	for p := 0; p < length; p++ {
		row := out[p*channels : (p+1)*channels]
		for i := 0; i < half; i++ {
			t := float64(p) * math.Exp(-inc*float64(i))
			row[i] = float32(math.Sin(t))
			row[half+i] = float32(math.Cos(t))
		}
	}
	return out
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
