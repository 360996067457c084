package cpu

import (
	"math"

	"hark/mlx"
)

// expFast is exp(x) to within about 2e-16 relative error in the
// normal range, several times faster than math.Exp because it skips the
// special-case handling that softmax inputs never need beyond these checks.
// Softmax and attention call it once per score.
func expFast(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > 709.7:
		return math.Inf(1)
	case x < -708.3:
		return 0
	}
	const (
		log2e = 1.4426950408889634
		ln2hi = 6.93147180369123816490e-01
		ln2lo = 1.90821492927058770002e-10
	)
	n := math.Floor(x*log2e + 0.5)
	r := (x - n*ln2hi) - n*ln2lo // |r| <= ln2/2
	// Taylor series to r^11: the truncation error is below 2e-16 for
	// |r| <= 0.347.
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040+
		r*(1.0/40320+r*(1.0/362880+r*(1.0/3628800+r*(1.0/39916800)))))))))))
	return p * math.Float64frombits(uint64(int64(n)+1023)<<52)
}

// roundTo rounds a float32 to the precision of dtype dt (identity for f32),
// for reproducing MLX's intermediate casts in half-precision kernels.
func roundTo(dt mlx.DType, f float32) float32 {
	switch dt {
	case mlx.Float16:
		return mlx.F16Table()[mlx.F32ToF16(f)]
	case mlx.BFloat16:
		return mlx.BF16ToF32(mlx.F32ToBF16(f))
	}
	return f
}
