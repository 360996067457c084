package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refSgemm computes alpha*op(A)*op(B) + beta*C in float64 with the
// magnitude of the terms for the error bound.
func refSgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, mag []float64) {
	want, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, g float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if tA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
				g += math.Abs(float64(av) * float64(bv))
			}
			w := float64(alpha) * s
			mg := math.Abs(float64(alpha)) * g
			if beta != 0 {
				w += float64(beta) * float64(c[i*ldc+j])
				mg += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j], mag[i*n+j] = w, mg
		}
	}
	return want, mag
}

func runSgemmCase(t *testing.T, r *rand.Rand, tA, tB bool, m, n, k int, alpha, beta float32, impl func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) {
	t.Helper()
	// Padded leading dimensions catch stride bugs.
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+3, bc+1, n+2
	a := randSlice(r, max(ar*lda, 1))
	b := randSlice(r, max(br*ldb, 1))
	c := randSlice(r, max(m*ldc, 1))
	if beta == 0 {
		for i := range c {
			c[i] = float32(math.NaN()) // beta == 0 must not read C
		}
	}
	want, mag := refSgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	impl(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	got := make([]float32, m*n)
	for i := 0; i < m; i++ {
		copy(got[i*n:(i+1)*n], c[i*ldc:i*ldc+n])
	}
	assertClose(t, fmt.Sprintf("tA%v tB%v m%d n%d k%d", tA, tB, m, n, k), got, want, mag, 1e-5)
}

func TestSgemmOddSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	sizes := []int{1, 3, 7, 17, 33, 65}
	impls := map[string]func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int){
		"Sgemm": Sgemm, "go": sgemmGo,
	}
	for name, impl := range impls {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range sizes {
					for _, n := range sizes {
						k := sizes[(m+n)%len(sizes)]
						t.Run(fmt.Sprintf("%s/%v%v/%dx%dx%d", name, tA, tB, m, n, k), func(t *testing.T) {
							runSgemmCase(t, r, tA, tB, m, n, k, 1, 0, impl)
						})
					}
				}
			}
		}
	}
}

func TestSgemmAlphaBeta(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, ab := range [][2]float32{{1, 1}, {0.5, -2}, {-1.5, 0}, {2, 0.25}} {
		runSgemmCase(t, r, false, true, 67, 45, 129, ab[0], ab[1], Sgemm)
		runSgemmCase(t, r, true, false, 130, 33, 70, ab[0], ab[1], Sgemm)
	}
	// Big enough for blocking across threads and cache panels.
	runSgemmCase(t, r, false, false, 300, 257, 513, 1, 0, Sgemm)
	runSgemmCase(t, r, true, true, 129, 301, 260, 1, 1, Sgemm)
}

func TestSgemmDegenerate(t *testing.T) {
	c := []float32{1, 2, 3, 4}
	Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 3, c, 2)
	for i, v := range []float32{3, 6, 9, 12} {
		if c[i] != v {
			t.Fatalf("k=0: c = %v, want beta*c", c)
		}
	}
	Sgemm(false, false, 0, 0, 5, 1, nil, 5, nil, 1, 0, nil, 1)
	defer func() {
		if recover() == nil {
			t.Error("short A did not panic")
		}
	}()
	Sgemm(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, c, 2)
}
