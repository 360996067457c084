package mlx

import (
	"fmt"
	"math"
)

// RoPEParams configures rotary position embedding (mlx.core.fast.rope).
type RoPEParams struct {
	// Dims is how many leading features of the last axis are rotated
	// (partial rotary when smaller than the head size); the rest pass
	// through unchanged. Must be even.
	Dims int
	// Traditional rotates interleaved pairs (x[2i], x[2i+1]); otherwise the
	// split halves (x[i], x[i+Dims/2]) are rotated, as HF/Llama weights
	// expect (MLX's traditional=False).
	Traditional bool
	// Base of the geometric frequency ladder: pair i turns at
	// Base^(-2i/Dims) radians per position. Ignored when Freqs is set.
	Base float32
	// Scale multiplies positions (linear rope scaling is Scale = 1/factor).
	// Zero means 1.
	Scale float32
	// Offset is the position of the first row (the KV-cache length).
	Offset int
	// Freqs, if not nil, is a [Dims/2] float array of per-pair wavelengths
	// ("freqs" in MLX: pair i turns at 1/Freqs[i] radians per position).
	// Llama3RoPEFreqs and YarnRoPEFreqs build it.
	Freqs *Array
	// MScale multiplies the rotated features (YaRN's attention scaling);
	// zero means 1.
	MScale float32
}

// RoPE rotates x of shape [..., L, D] where row l has position Offset+l
// along axis -2. Angles and rotations are computed in float32 or better;
// the output keeps x's dtype.
func RoPE(x *Array, p RoPEParams) *Array {
	be := backendOf("RoPE", x, p.Freqs)
	if len(x.shape) < 2 || !x.dtype.IsFloat() {
		panic(fmt.Sprintf("mlx.RoPE: input %v must be float with shape [..., L, D]", x))
	}
	p = ropeParams("RoPE", p, x.shape[len(x.shape)-1])
	out := newArray(be, x.dtype, x.shape)
	be.RoPE(x, p, p.Freqs, out)
	return out
}

// ropeParams checks p for heads of d features, for op, and returns it with
// a zero Scale and MScale made 1.
func ropeParams(op string, p RoPEParams, d int) RoPEParams {
	if p.Dims <= 0 || p.Dims%2 != 0 || p.Dims > d {
		panic(fmt.Sprintf("mlx.%s: dims %d invalid for feature size %d", op, p.Dims, d))
	}
	if p.Freqs != nil && (len(p.Freqs.shape) != 1 || p.Freqs.shape[0] != p.Dims/2) {
		panic(fmt.Sprintf("mlx.%s: freqs shape %v, want [%d]", op, p.Freqs.shape, p.Dims/2))
	}
	if p.Freqs == nil && p.Base <= 0 {
		panic("mlx." + op + ": base must be positive when freqs is nil")
	}
	if p.Scale == 0 {
		p.Scale = 1
	}
	if p.MScale == 0 {
		p.MScale = 1
	}
	return p
}

// Llama3RoPEFreqs returns the [dims/2] float32 wavelengths of Llama 3.x's
// "llama3" rope scaling (config rope_scaling: factor, low_freq_factor,
// high_freq_factor, original_max_position_embeddings), for RoPEParams.Freqs.
// Long wavelengths are stretched by factor, short ones kept, and the band in
// between interpolated smoothly.
func Llama3RoPEFreqs(dims int, theta, factor, lowFreqFactor, highFreqFactor float64, originalMaxPos int) *Array {
	old := float64(originalMaxPos)
	lowWave := old / lowFreqFactor
	highWave := old / highFreqFactor
	f := make([]float32, dims/2)
	for i := range f {
		fr := math.Pow(theta, float64(2*i)/float64(dims))
		wave := 2 * math.Pi * fr
		switch {
		case wave > lowWave:
			fr *= factor
		case wave > highWave:
			// inside the band: blend between scaled and unscaled
			smooth := (old/wave - lowFreqFactor) / (highFreqFactor - lowFreqFactor)
			fr = fr / ((1-smooth)/factor + smooth)
		}
		f[i] = float32(fr)
	}
	return FromSlice(f)
}

// YarnRoPEFreqs returns the [dims/2] float32 wavelengths of YaRN scaling
// (rope_scaling type "yarn": factor, original_max_position_embeddings,
// beta_fast, beta_slow; defaults 32 and 1). Pairs that rotate fast enough
// keep their wavelength, slow ones are stretched by factor, with a linear
// ramp between the correction dims. Use YarnMScale for RoPEParams.MScale.
func YarnRoPEFreqs(dims int, theta, factor float64, originalMaxPos int, betaFast, betaSlow float64) *Array {
	return yarnFreqs(dims, theta, factor, originalMaxPos, betaFast, betaSlow, true)
}

// YarnRoPEFreqsUntruncated is YarnRoPEFreqs with the correction range
// left fractional instead of widened to whole dimensions: a config's
// rope_scaling.truncate false (GPT-OSS as released).
func YarnRoPEFreqsUntruncated(dims int, theta, factor float64, originalMaxPos int, betaFast, betaSlow float64) *Array {
	return yarnFreqs(dims, theta, factor, originalMaxPos, betaFast, betaSlow, false)
}

func yarnFreqs(dims int, theta, factor float64, originalMaxPos int, betaFast, betaSlow float64, truncate bool) *Array {
	corrDim := func(rot float64) float64 {
		return float64(dims) * math.Log(float64(originalMaxPos)/(rot*2*math.Pi)) / (2 * math.Log(theta))
	}
	low, high := corrDim(betaFast), corrDim(betaSlow)
	if truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = max(low, 0), min(high, float64(dims-1))
	if low == high {
		high += 0.001
	}
	f := make([]float32, dims/2)
	for i := range f {
		extra := math.Pow(theta, float64(2*i)/float64(dims))
		inter := factor * extra
		ramp := min(max((float64(i)-low)/(high-low), 0), 1)
		keep := 1 - ramp // weight of the unstretched wavelength
		f[i] = float32(inter * extra / (inter*keep + extra*(1-keep)))
	}
	return FromSlice(f)
}

// YarnMScale is YaRN's attention factor
// mscale(factor, mscale)/mscale(factor, mscaleAllDim), where
// mscale(s, m) = 0.1*m*ln(s) + 1 for s > 1 and 1 otherwise. A config's
// explicit attention_factor overrides it.
func YarnMScale(factor, mscale, mscaleAllDim float64) float64 {
	g := func(s, m float64) float64 {
		if s <= 1 {
			return 1
		}
		return 0.1*m*math.Log(s) + 1
	}
	return g(factor, mscale) / g(factor, mscaleAllDim)
}

// LongRoPEFreqs returns Phi-3's "longrope"/su scaling wavelengths for
// RoPEParams.Freqs: factors[i] * theta^(2i/dims), with factors the config's
// long_factor list (length dims/2). Pair it with LongRoPEMScale.
func LongRoPEFreqs(dims int, theta float64, factors []float64) *Array {
	if len(factors) != dims/2 {
		panic(fmt.Sprintf("mlx.LongRoPEFreqs: %d factors for %d dims", len(factors), dims))
	}
	f := make([]float32, dims/2)
	for i := range f {
		f[i] = float32(factors[i] * math.Pow(theta, float64(2*i)/float64(dims)))
	}
	return FromSlice(f)
}

// LongRoPEMScale is longrope's input scaling
// sqrt(1 + ln(s)/ln(originalMaxPos)) with s = maxPos/originalMaxPos, or 1
// when s <= 1. A config's long_mscale overrides it.
func LongRoPEMScale(maxPos, originalMaxPos int) float64 {
	s := float64(maxPos) / float64(originalMaxPos)
	if s <= 1 {
		return 1
	}
	return math.Sqrt(1 + math.Log(s)/math.Log(float64(originalMaxPos)))
}
