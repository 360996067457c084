package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refQMatmul is the float64 reference. It reads every code straight from
// the bit stream (independently of the package's unpacking), forms
// scale*q + bias, and multiplies in float64. mag is sum |x|·(|scale·q| +
// |bias|) per output: the scale of float32 rounding error for both the
// dequantize-then-dot and the factored s·(x·q) + b·sum(x) evaluation.
func refQMatmul(x []float32, m, k, n int, packed []uint32, scales, biases []float32, gs, bits int, transpose bool) (want, mag []float64) {
	rows, cols := n, k
	if !transpose {
		rows, cols = k, n
	}
	wpr, gpr := cols*bits/32, cols/gs
	w := make([]float64, rows*cols)
	wmag := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			s, b := scales[r*gpr+c/gs], biases[r*gpr+c/gs]
			sq := float32(s * float32(codeAt(packed, bits, wpr, r, c)))
			w[r*cols+c] = float64(sq + b)
			wmag[r*cols+c] = math.Abs(float64(sq)) + math.Abs(float64(b))
		}
	}
	want, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var sum, a float64
			for p := 0; p < k; p++ {
				idx := p*n + j
				if transpose {
					idx = j*k + p
				}
				sum += float64(x[i*k+p]) * w[idx]
				a += math.Abs(float64(x[i*k+p])) * wmag[idx]
			}
			want[i*n+j], mag[i*n+j] = sum, a
		}
	}
	return want, mag
}

func TestQMatmulAllFormats(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, bits := range ValidBits {
		for _, gs := range ValidGroupSizes {
			for _, tr := range []bool{true, false} {
				for _, sh := range [][3]int{{1, 1, 3}, {3, 2, 7}, {7, 1, 17}, {2, 3, 33}, {17, 2, 5}} {
					// sh = m, groups along the quantized axis, other dim.
					m := sh[0]
					var k, n int
					if tr {
						k, n = sh[1]*gs, sh[2]
					} else {
						k, n = sh[2], sh[1]*gs
					}
					name := fmt.Sprintf("b%d_g%d_t%v_m%d_k%d_n%d", bits, gs, tr, m, k, n)
					rows, cols := n, k
					if !tr {
						rows, cols = k, n
					}
					w := randSlice(r, rows*cols)
					x := randSlice(r, m*k)
					packed, scales, biases, err := Quantize(w, rows, cols, gs, bits)
					if err != nil {
						t.Fatal(name, err)
					}
					want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, bits, tr)
					out := make([]float32, m*n)
					for i := range out {
						out[i] = float32(math.NaN()) // must be overwritten
					}
					if err := QMatmul(x, m, k, n, packed, scales, biases, gs, bits, tr, out); err != nil {
						t.Fatal(name, err)
					}
					assertClose(t, name, out, want, mag, 1e-5)
					got := make([]float32, m*n)
					qmatmulGo(x, m, k, n, qmat{packed, scales, biases, gs, bits}, tr, got)
					assertClose(t, name+"/go", got, want, mag, 1e-5)
				}
			}
		}
	}
}

// TestQMatmulLarge runs shapes big enough to use every thread and the SIMD
// main loops (including k not a multiple of the vector width on the
// non-transposed side) and the dequantize-then-Sgemm path for big m.
func TestQMatmulLarge(t *testing.T) {
	withoutAMX(t) // the float32 paths, to their bound
	r := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []int{3, 4, 8} {
		for _, tr := range []bool{true, false} {
			for _, m := range []int{1, 4, 9, qmmDequantMinM + 1} {
				k, n := 640, 193
				if !tr {
					k, n = 193, 640
				}
				rows, cols := n, k
				if !tr {
					rows, cols = k, n
				}
				w := randSlice(r, rows*cols)
				x := randSlice(r, m*k)
				packed, scales, biases, _ := Quantize(w, rows, cols, 64, bits)
				want, mag := refQMatmul(x, m, k, n, packed, scales, biases, 64, bits, tr)
				out := make([]float32, m*n)
				if err := QMatmul(x, m, k, n, packed, scales, biases, 64, bits, tr, out); err != nil {
					t.Fatal(err)
				}
				assertClose(t, fmt.Sprintf("b%d_t%v_m%d", bits, tr, m), out, want, mag, 1e-5)
			}
		}
	}
}

func TestQMatmulErrors(t *testing.T) {
	x := make([]float32, 64)
	w, s, b, _ := Quantize(make([]float32, 64*2), 2, 64, 64, 4)
	out := make([]float32, 2)
	if err := QMatmul(x, 1, 64, 2, w, s, b, 64, 4, true, out); err != nil {
		t.Fatalf("valid call failed: %v", err)
	}
	if err := QMatmul(x, 1, 64, 2, w, s, b, 64, 5, true, out); err == nil {
		t.Error("wrong bits accepted")
	}
	if err := QMatmul(x, 2, 64, 2, w, s, b, 64, 4, true, out); err == nil {
		t.Error("short x accepted")
	}
	if err := QMatmul(x, 1, 64, 2, w, s, b, 64, 4, true, out[:1]); err == nil {
		t.Error("short out accepted")
	}
}
