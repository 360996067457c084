package kernels

// Large batches (prefill) are compute-bound: dequantizing a tile of weights
// once and handing it to Sgemm beats decoding every weight for each row of
// x. qmmDequantMinM is the batch size where that starts to pay off
// (measured on 4096x4096 q4: at m=64 decoding directly still costs less
// CPU, at m=128 the Sgemm path wins by ~25%). With AVX-512, x @ W^T skips
// the tile: qgemmT dequantizes W into the GEMM's own B panels.
const qmmDequantMinM = 96

// qmmTileElems bounds the dequantized tile (~8 MB of float32) so memory
// stays flat however large W is.
const qmmTileElems = 2 << 20

// getTile returns a tile buffer of n floats from the large-buffer free
// lists (bigbuf.go; give it back with GiveF32): a fresh 8-20 MB slice per
// call would be zeroed and page-faulted every time, and sync.Pool let it
// go at every collection. Any kept buffer that is large enough will do,
// and new ones are whole MB.
func getTile(n int) []float32 {
	if s := takeAtLeast(n); s != nil {
		return s
	}
	return TakeF32(n, (n+BigMinFloats-1)/BigMinFloats*BigMinFloats)
}

// qmatmulDequantT computes out = x @ W^T for W quantized [n, k] in tiles of
// weight rows.
func qmatmulDequantT(x []float32, m, k, n int, q qmat, out []float32) {
	if qgemmT(x, m, k, n, q, out) {
		return
	}
	tile := max(1, min(n, qmmTileElems/k))
	buf := getTile(tile * k)
	defer GiveF32(buf)
	wpr, gpr := PackedCols(k, q.bits), k/q.groupSize
	for j0 := 0; j0 < n; j0 += tile {
		j1 := min(j0+tile, n)
		rows := j1 - j0
		_ = Dequantize(q.w[j0*wpr:j1*wpr], q.scales[j0*gpr:j1*gpr], q.biases[j0*gpr:j1*gpr], rows, k, q.groupSize, q.bits, buf)
		// out[:, j0:j1] = x @ buf^T, written in place through ldc = n.
		Sgemm(false, true, m, rows, k, 1, x, k, buf[:rows*k], k, 0, out[j0:], n)
	}
}

// qmatmulDequantN computes out = x @ W for W quantized [k, n] in tiles of
// weight rows (the reduction axis), accumulating into out.
func qmatmulDequantN(x []float32, m, k, n int, q qmat, out []float32) {
	tile := max(1, min(k, qmmTileElems/n))
	buf := getTile(tile * n)
	defer GiveF32(buf)
	wpr, gpr := PackedCols(n, q.bits), n/q.groupSize
	for r0 := 0; r0 < k; r0 += tile {
		r1 := min(r0+tile, k)
		rows := r1 - r0
		_ = Dequantize(q.w[r0*wpr:r1*wpr], q.scales[r0*gpr:r1*gpr], q.biases[r0*gpr:r1*gpr], rows, n, q.groupSize, q.bits, buf)
		beta := float32(1)
		if r0 == 0 {
			beta = 0
		}
		Sgemm(false, false, m, n, rows, 1, x[r0:], k, buf[:rows*n], n, beta, out, n)
	}
}
