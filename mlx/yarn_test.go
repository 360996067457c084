package mlx_test

import (
	"math"
	"testing"

	"hark/mlx"
)

// refYarnWavelengths follows Hugging Face's _compute_yarn_parameters in
// float64: inverse frequencies blended between interpolation (1/factor)
// and extrapolation by a linear ramp over the correction range, which
// truncate rounds outward to whole dimensions.
func refYarnWavelengths(dims int, base, factor float64, orig int, betaFast, betaSlow float64, truncate bool) []float64 {
	corr := func(rot float64) float64 {
		return float64(dims) * math.Log(float64(orig)/(rot*2*math.Pi)) / (2 * math.Log(base))
	}
	low, high := corr(betaFast), corr(betaSlow)
	if truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = math.Max(low, 0), math.Min(high, float64(dims-1))
	if low == high {
		high += 0.001
	}
	out := make([]float64, dims/2)
	for i := range out {
		extra := 1 / math.Pow(base, float64(2*i)/float64(dims))
		inter := extra / factor
		ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
		extraFactor := 1 - ramp
		out[i] = 1 / (inter*(1-extraFactor) + extra*extraFactor)
	}
	return out
}

// YaRN with truncate true (the default) and false both match the formula;
// the two differ (GPT-OSS's numbers put the range between dimensions).
func TestYarnTruncate(t *testing.T) {
	leakFree(t)
	const dims, base, factor, orig = 64, 150000.0, 32.0, 4096
	for _, trunc := range []bool{true, false} {
		f := mlx.YarnRoPEFreqs
		if !trunc {
			f = mlx.YarnRoPEFreqsUntruncated
		}
		a := f(dims, base, factor, orig, 32, 1)
		closeTo(t, "yarn", a.Float32s(), refYarnWavelengths(dims, base, factor, orig, 32, 1, trunc), 1e-6, 0)
		a.Free()
	}
	a, b := mlx.YarnRoPEFreqs(dims, base, factor, orig, 32, 1), mlx.YarnRoPEFreqsUntruncated(dims, base, factor, orig, 32, 1)
	defer mlx.Free(a, b)
	same := true
	for i, x := range a.Float32s() {
		same = same && math.Abs(float64(x-b.Float32s()[i])) < 1e-3*float64(x)
	}
	if same {
		t.Fatal("truncate true and false give the same wavelengths: the option does nothing here")
	}
}
