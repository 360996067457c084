package kernels

import "fmt"

// QMatmul multiplies x ([m, k], row-major float32) by an MLX affine-quantized
// matrix W into out ([m, n]).
//
//   - transpose=true: W is quantized [n, k] (the layout of nn.QuantizedLinear
//     weights) and out = x @ W^T. Groups run along k.
//   - transpose=false: W is quantized [k, n] and out = x @ W. Groups run
//     along n.
//
// Results match x times the Dequantize output up to float32 rounding: the
// decode-sized kernels (m < 32) use the factored form
// sum_g scale_g*(x·q)_g + bias_g*sum(x)_g, and larger batches dequantize
// tiles of W exactly and hand them to Sgemm. On CPUs with AMX, x @ Wᵀ
// from amxMinM rows and amxMinK columns rounds x and the dequantized
// weights to bf16 instead
// (amx.go: relative error up to about 2^-7 of Σ|x·w|, below the 4-bit
// quantization's own). Threads: GOMAXPROCS.
func QMatmul(x []float32, m, k, n int, w []uint32, scales, biases []float32, groupSize, bits int, transpose bool, out []float32) error {
	rows, cols := n, k
	if !transpose {
		rows, cols = k, n
	}
	if err := checkQuantParams(rows, cols, groupSize, bits); err != nil {
		return fmt.Errorf("qmatmul: %w", err)
	}
	if err := checkQuantBuffers(w, scales, biases, rows, cols, groupSize, bits); err != nil {
		return fmt.Errorf("qmatmul: %w", err)
	}
	if m < 0 {
		return fmt.Errorf("kernels: qmatmul: negative m %d", m)
	}
	if len(x) < m*k {
		return fmt.Errorf("kernels: qmatmul: x has %d values, want %d for [%d, %d]", len(x), m*k, m, k)
	}
	if len(out) < m*n {
		return fmt.Errorf("kernels: qmatmul: out has %d values, want %d for [%d, %d]", len(out), m*n, m, n)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		clear(out[:m*n])
		return nil
	}
	q := qmat{w: w, scales: scales, biases: biases, groupSize: groupSize, bits: bits}
	if transpose {
		qmatmulT(x, m, k, n, q, out)
	} else {
		qmatmulN(x, m, k, n, q, out)
	}
	return nil
}

// qmat bundles a quantized matrix's buffers and format.
type qmat struct {
	w              []uint32
	scales, biases []float32
	groupSize      int
	bits           int
}

// qmatmulTGo computes out[:, lo:hi] for out = x @ W^T, W quantized [n, k]:
// each weight row is dequantized once into scratch and dotted with every
// row of x, so the weights are streamed exactly once.
func qmatmulTGo(x []float32, m, k, n int, q qmat, out []float32, lo, hi int) {
	wpr := PackedCols(k, q.bits)
	gpr := k / q.groupSize
	row := make([]float32, k)
	codes := make([]uint8, q.groupSize)
	for j := lo; j < hi; j++ {
		src := q.w[j*wpr : (j+1)*wpr]
		for g := 0; g < gpr; g++ {
			dequantGroup(src, q.bits, g*q.groupSize, q.scales[j*gpr+g], q.biases[j*gpr+g], codes,
				row[g*q.groupSize:(g+1)*q.groupSize])
		}
		for i := 0; i < m; i++ {
			out[i*n+j] = dot32(x[i*k:(i+1)*k], row)
		}
	}
}

// qmatmulNGo computes out[:, lo:hi] for out = x @ W, W quantized [k, n];
// lo and hi are group-aligned so every group is dequantized whole.
func qmatmulNGo(x []float32, m, k, n int, q qmat, out []float32, lo, hi int) {
	wpr := PackedCols(n, q.bits)
	gpr := n / q.groupSize
	seg := make([]float32, hi-lo)
	codes := make([]uint8, q.groupSize)
	for i := 0; i < m; i++ {
		clear(out[i*n+lo : i*n+hi])
	}
	for p := 0; p < k; p++ {
		src := q.w[p*wpr : (p+1)*wpr]
		for c := lo; c < hi; c += q.groupSize {
			g := c / q.groupSize
			dequantGroup(src, q.bits, c, q.scales[p*gpr+g], q.biases[p*gpr+g], codes, seg[c-lo:c-lo+q.groupSize])
		}
		for i := 0; i < m; i++ {
			axpy32(x[i*k+p], seg, out[i*n+lo:i*n+hi])
		}
	}
}

// qmatmulGo is the portable implementation, parallel over output columns.
func qmatmulGo(x []float32, m, k, n int, q qmat, transpose bool, out []float32) {
	if transpose {
		parallelFor(n, 1, 8, func(lo, hi int) { qmatmulTGo(x, m, k, n, q, out, lo, hi) })
		return
	}
	parallelFor(n, q.groupSize, q.groupSize, func(lo, hi int) { qmatmulNGo(x, m, k, n, q, out, lo, hi) })
}

// Dot is dot32 for the mlx package's small matmuls.
func Dot(a, b []float32) float32 { return dot32(a, b) }

// dot32 is a 4-way unrolled float32 dot product; the separate partial sums
// let the CPU overlap the additions.
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy32 computes y += alpha*x.
func axpy32(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}
