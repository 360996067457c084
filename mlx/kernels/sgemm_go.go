package kernels

// sgemmGo is the portable Sgemm. It copies op(B) into a contiguous [k, n]
// panel when B is transposed, then walks C in cache blocks (kb x nb of B
// stays in L2) with rows of C split across goroutines. The inner loop
// updates four rows of C per load of B. It is a correctness fallback for
// CGO_ENABLED=0 builds, not a BLAS.
func sgemmGo(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	bp, ldbp := b, ldb
	if transB {
		bp, ldbp = make([]float32, k*n), n
		for j := 0; j < n; j++ {
			for p := 0; p < k; p++ {
				bp[p*n+j] = b[j*ldb+p]
			}
		}
	}
	opA := func(i, p int) float32 {
		if transA {
			return alpha * a[p*lda+i]
		}
		return alpha * a[i*lda+p]
	}
	parallelFor(m, 4, 4, func(lo, hi int) {
		scaleC(hi-lo, n, beta, c[lo*ldc:], ldc)
		const kb, nb = 128, 512
		for j0 := 0; j0 < n; j0 += nb {
			j1 := min(j0+nb, n)
			for p0 := 0; p0 < k; p0 += kb {
				p1 := min(p0+kb, k)
				i := lo
				for ; i+4 <= hi; i += 4 {
					c0 := c[i*ldc+j0 : i*ldc+j1]
					c1 := c[(i+1)*ldc+j0 : (i+1)*ldc+j1]
					c2 := c[(i+2)*ldc+j0 : (i+2)*ldc+j1]
					c3 := c[(i+3)*ldc+j0 : (i+3)*ldc+j1]
					for p := p0; p < p1; p++ {
						a0, a1, a2, a3 := opA(i, p), opA(i+1, p), opA(i+2, p), opA(i+3, p)
						brow := bp[p*ldbp+j0 : p*ldbp+j1]
						c0, c1, c2, c3 := c0[:len(brow)], c1[:len(brow)], c2[:len(brow)], c3[:len(brow)]
						for j, bv := range brow {
							c0[j] += a0 * bv
							c1[j] += a1 * bv
							c2[j] += a2 * bv
							c3[j] += a3 * bv
						}
					}
				}
				for ; i < hi; i++ {
					row := c[i*ldc+j0 : i*ldc+j1]
					for p := p0; p < p1; p++ {
						axpy32(opA(i, p), bp[p*ldbp+j0:p*ldbp+j1], row)
					}
				}
			}
		}
	})
}
