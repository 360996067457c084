package kernels

import (
	"fmt"
	"math"
	"sync"
)

// Half names the 16-bit float format of a weight matrix held as raw bits.
type Half int

const (
	// BF16 is bfloat16: the top half of a float32, so widening is a shift.
	BF16 Half = iota + 1
	// F16 is IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits).
	F16
)

func (h Half) String() string {
	switch h {
	case BF16:
		return "bf16"
	case F16:
		return "f16"
	}
	return fmt.Sprintf("Half(%d)", int(h))
}

// HMatmul multiplies x ([m, k], row-major float32) by a 16-bit float
// matrix W held as raw bits in w, into out ([m, n], float32):
//
//   - transB=true: W is [n, k] (the layout of linear-layer weights and
//     embedding tables) and out = x @ Wᵀ;
//   - transB=false: W is [k, n] and out = x @ W.
//
// W is widened to float32 inside the kernels and never as a whole: small
// batches (decode) stream it once, converting each vector as it is loaded
// and accumulating in float32; larger batches (prefill) convert a bounded
// tile of W at a time and hand it to Sgemm. Every product and sum is in
// float32, so results match x times the exactly widened W up to float32
// rounding of the sum; except that on CPUs with AMX or AVX-512 BF16, a
// bf16 x @ Wᵀ of at least amxMinM rows and amxMinK columns rounds x to
// bf16 too (amx.go, dpbf16.go: relative error up to 2^-8 of Σ|x·w|).
// Threads: GOMAXPROCS.
func HMatmul(x []float32, m, k, n int, w []uint16, format Half, transB bool, out []float32) error {
	if format != BF16 && format != F16 {
		return fmt.Errorf("kernels: hmatmul: unknown 16-bit format %v", format)
	}
	if m < 0 || k < 0 || n < 0 {
		return fmt.Errorf("kernels: hmatmul: negative size m=%d k=%d n=%d", m, k, n)
	}
	if len(x) < m*k {
		return fmt.Errorf("kernels: hmatmul: x has %d values, want %d for [%d, %d]", len(x), m*k, m, k)
	}
	if len(w) < k*n {
		return fmt.Errorf("kernels: hmatmul: w has %d values, want %d for a %d×%d matrix", len(w), k*n, k, n)
	}
	if len(out) < m*n {
		return fmt.Errorf("kernels: hmatmul: out has %d values, want %d for [%d, %d]", len(out), m*n, m, n)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		clear(out[:m*n])
		return nil
	}
	if transB && amxHalfT(x, m, k, n, w, format, out) {
		return nil
	}
	if transB && dpHalfT(x, m, k, n, w, format, out) {
		return nil
	}
	if m >= hmmGemmMinM {
		hmatmulTiles(x, m, k, n, w, format, transB, out)
		return nil
	}
	hmatmulSmall(x, m, k, n, w, format, transB, out)
	return nil
}

// HalfToF32 widens len(src) 16-bit floats into dst (at least as long).
// Widening is exact: every finite or infinite bf16 and f16 value is a
// float32 value, and NaNs stay NaN.
func HalfToF32(dst []float32, src []uint16, format Half) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels: HalfToF32: dst has %d values for %d", len(dst), len(src)))
	}
	if len(src) == 0 {
		return
	}
	halfToF32(dst[:len(src)], src, format)
}

// HMatmulRowsMaxM is the most rows of x for which HMatmul of x @ Wᵀ sums
// every row exactly as it sums that row alone, on each kernel (C's
// HARK_HMM_ROWS, the same number): batched decode (engine.MaxBatchRows)
// stays within it.
const HMatmulRowsMaxM = 16

// hmmGemmMinM is the batch size from which widening a tile of W and
// calling Sgemm beats the streaming kernels, which widen every vector of
// W once per four rows of x. BenchmarkHMatmul on the 2-core EPYC test
// machine, idle, bf16 896x4864 (GFLOP/s): m=31 streaming 66, m=64 tiles
// 50 against streaming 66, m=128 tiles 60 against streaming 54. The switch
// sits between, as qmmDequantMinM does for the quantized kernels.
const hmmGemmMinM = 96

// hmmInlineBytes: a call reading less than twice this much of W stays on
// the calling goroutine, and larger calls hand each goroutine at least
// this much (as qmmInlineBytes for the quantized kernels).
const hmmInlineBytes = 128 << 10

// hmmTileElems bounds the widened tile of W (20 MB of float32) so memory
// stays flat however large W is. It holds a whole 896×4864 projection of a
// 0.5B model, so those take one Sgemm call: each call over a narrower tile
// gives up some of Sgemm's speed (its threads split a smaller product and
// start again), which the tiles made visible as %sgemm in
// BenchmarkCeilingHalf.
var hmmTileElems = 5 << 20

// hmmTileRows splits total rows of W of rowLen values each into tiles
// of at most hmmTileElems, all of one size (a multiple of 16 where it can
// be, Sgemm's register-block width) rather than full tiles and a sliver.
func hmmTileRows(total, rowLen int) int {
	most := max(1, hmmTileElems/rowLen) // whole rows per tile
	tiles := (total + most - 1) / most
	rows := (total + tiles - 1) / tiles // at most most
	if r := (rows + 15) &^ 15; r*rowLen <= hmmTileElems {
		rows = r
	}
	return max(1, min(total, rows))
}

// useHGemm lets tests turn off the 16-bit panel GEMM (hgemm_amd64.go), so
// the tiles below are tested where that GEMM would take their place.
var useHGemm = true

// hmatmulTiles widens W a tile at a time into a pooled buffer and
// multiplies each tile with Sgemm: along n (rows of W) for x @ Wᵀ, along
// k (the reduction, accumulating) for x @ W.
func hmatmulTiles(x []float32, m, k, n int, w []uint16, format Half, transB bool, out []float32) {
	if transB {
		if useHGemm && hgemmT(x, m, k, n, w, format, out) {
			return
		}
		tile := hmmTileRows(n, k)
		buf := getTile(tile * k)
		defer GiveF32(buf)
		for j0 := 0; j0 < n; j0 += tile {
			j1 := min(j0+tile, n)
			rows := j1 - j0
			widenParallel(buf[:rows*k], w[j0*k:j1*k], format)
			Sgemm(false, true, m, rows, k, 1, x, k, buf[:rows*k], k, 0, out[j0:], n)
		}
		return
	}
	tile := hmmTileRows(k, n)
	buf := getTile(tile * n)
	defer GiveF32(buf)
	for r0 := 0; r0 < k; r0 += tile {
		r1 := min(r0+tile, k)
		rows := r1 - r0
		widenParallel(buf[:rows*n], w[r0*n:r1*n], format)
		beta := float32(1)
		if r0 == 0 {
			beta = 0
		}
		Sgemm(false, false, m, n, rows, 1, x[r0:], k, buf[:rows*n], n, beta, out, n)
	}
}

// widenParallel is HalfToF32 split across the pool (a tile is megabytes).
func widenParallel(dst []float32, src []uint16, format Half) {
	parallelFor(len(src), 64, hmmInlineBytes/2, func(lo, hi int) { halfToF32(dst[lo:hi], src[lo:hi], format) })
}

// hmmRowScratch recycles the portable kernels' widened rows.
var hmmRowScratch = sync.Pool{New: func() any { return new([]float32) }}

// hmatmulTGo computes out[:, lo:hi] of out = x @ Wᵀ, W [n, k]: each row
// of W is widened once into scratch and dotted with every row of x.
func hmatmulTGo(x []float32, m, k, n int, w []uint16, format Half, out []float32, lo, hi int) {
	sp := hmmRowScratch.Get().(*[]float32)
	if cap(*sp) < k {
		*sp = make([]float32, k)
	}
	row := (*sp)[:k]
	for j := lo; j < hi; j++ {
		halfToF32(row, w[j*k:(j+1)*k], format)
		for i := 0; i < m; i++ {
			out[i*n+j] = dot32(x[i*k:(i+1)*k], row)
		}
	}
	hmmRowScratch.Put(sp)
}

// hmatmulNGo computes out[:, lo:hi] of out = x @ W, W [k, n]: each row
// segment of W is widened once and added into every row of out.
func hmatmulNGo(x []float32, m, k, n int, w []uint16, format Half, out []float32, lo, hi int) {
	sp := hmmRowScratch.Get().(*[]float32)
	if cap(*sp) < hi-lo {
		*sp = make([]float32, hi-lo)
	}
	seg := (*sp)[:hi-lo]
	for i := 0; i < m; i++ {
		clear(out[i*n+lo : i*n+hi])
	}
	for p := 0; p < k; p++ {
		halfToF32(seg, w[p*n+lo:p*n+hi], format)
		for i := 0; i < m; i++ {
			axpy32(x[i*k+p], seg, out[i*n+lo:i*n+hi])
		}
	}
	hmmRowScratch.Put(sp)
}

// hmatmulGo is the portable small-batch product, parallel over the
// columns of out.
func hmatmulGo(x []float32, m, k, n int, w []uint16, format Half, transB bool, out []float32) {
	if transB {
		parallelFor(n, 1, max(1, hmmInlineBytes/(2*k)), func(lo, hi int) { hmatmulTGo(x, m, k, n, w, format, out, lo, hi) })
		return
	}
	parallelFor(n, 16, max(16, hmmInlineBytes/(2*k)), func(lo, hi int) { hmatmulNGo(x, m, k, n, w, format, out, lo, hi) })
}

// halfToF32Go widens src into dst (same length) in portable Go.
func halfToF32Go(dst []float32, src []uint16, format Half) {
	dst = dst[:len(src)]
	if format == BF16 {
		for i, h := range src {
			dst[i] = math.Float32frombits(uint32(h) << 16)
		}
		return
	}
	for i, h := range src {
		dst[i] = f16ToF32(h)
	}
}

// f16ToF32 widens one IEEE binary16 value exactly, subnormals, infinities
// and NaN payloads included.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload in the top mantissa bits
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: shift the leading one into the implicit bit.
	e := uint32(113)
	for man&0x400 == 0 {
		man <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
}
