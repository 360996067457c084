package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refHalf decodes a 16-bit float from its fields in float64, independently
// of the package's bit tricks: sign, biased exponent, mantissa.
func refHalf(h uint16, f Half) float64 {
	var expBits, manBits, bias int
	switch f {
	case BF16:
		expBits, manBits, bias = 8, 7, 127
	case F16:
		expBits, manBits, bias = 5, 10, 15
	default:
		panic(f)
	}
	sign := 1.0
	if h>>15 != 0 {
		sign = -1
	}
	exp := int(h>>manBits) & (1<<expBits - 1)
	man := float64(int(h) & (1<<manBits - 1))
	switch {
	case exp == 1<<expBits-1 && man == 0:
		return math.Inf(int(sign))
	case exp == 1<<expBits-1:
		return math.NaN()
	case exp == 0:
		return sign * math.Ldexp(man, 1-bias-manBits)
	}
	return sign * math.Ldexp(man+float64(int(1)<<manBits), exp-bias-manBits)
}

func TestHalfToF32AllValues(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	for _, f := range []Half{BF16, F16} {
		for _, v := range hmmVariants {
			setHmmForce(v.force)
			// Offsets and odd lengths reach the vector loops' tails.
			for _, off := range []int{0, 3} {
				s := src[off : len(src)-off]
				dst := make([]float32, len(s))
				HalfToF32(dst, s, f)
				checkWidened(t, fmt.Sprintf("%v/%s/off%d", f, v.name, off), dst, s, f)
			}
		}
		dst := make([]float32, len(src))
		halfToF32Go(dst, src, f)
		checkWidened(t, fmt.Sprintf("%v/go", f), dst, src, f)
	}
	setHmmForce(0)
}

func checkWidened(t *testing.T, what string, got []float32, src []uint16, f Half) {
	t.Helper()
	bad := 0
	for i, h := range src {
		want, g := refHalf(h, f), float64(got[i])
		ok := g == want && math.Signbit(g) == math.Signbit(want)
		if math.IsNaN(want) {
			ok = math.IsNaN(g)
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: %#04x widened to %v, want %v", what, h, g, want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values wrong", what, bad, len(src))
	}
}

// randHalf draws finite 16-bit values of moderate size (about 2^-6 to
// 2^6), with every tenth one subnormal or zero to cover those encodings.
func randHalf(r *rand.Rand, n int, f Half) []uint16 {
	w := make([]uint16, n)
	for i := range w {
		sign := uint16(r.IntN(2)) << 15
		switch f {
		case BF16:
			exp := uint16(121 + r.IntN(12))
			if r.IntN(10) == 0 {
				exp = 0
			}
			w[i] = sign | exp<<7 | uint16(r.IntN(1<<7))
		default:
			exp := uint16(9 + r.IntN(12))
			if r.IntN(10) == 0 {
				exp = 0
			}
			w[i] = sign | exp<<10 | uint16(r.IntN(1<<10))
		}
	}
	return w
}

// refHMatmul is the float64 product of x and the exactly widened W, with
// mag = sum |x|·|w| per output, the scale of float32 rounding error.
func refHMatmul(x []float32, m, k, n int, w []uint16, f Half, transB bool) (want, mag []float64) {
	want, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, a float64
			for p := 0; p < k; p++ {
				idx := p*n + j
				if transB {
					idx = j*k + p
				}
				v := float64(x[i*k+p]) * refHalf(w[idx], f)
				s += v
				a += math.Abs(v)
			}
			want[i*n+j], mag[i*n+j] = s, a
		}
	}
	return want, mag
}

// hmmShapes are m, k, n: k on both sides of the vector widths (8, 16,
// 32), n not a multiple of any tile or segment, m from decode sizes
// through the tiled GEMM.
var hmmShapes = [][3]int{
	{1, 1, 1}, {1, 7, 3}, {1, 8, 5}, {1, 31, 17}, {1, 33, 9}, {1, 100, 130}, {1, 257, 67},
	{2, 17, 11}, {3, 40, 5}, {4, 16, 70}, {5, 65, 33}, {7, 129, 19},
	{hmmGemmMinM, 33, 65}, {hmmGemmMinM + 9, 100, 37}, {40, 257, 130},
}

func TestHMatmul(t *testing.T) {
	withoutAMX(t) // the float32 paths, to their bound
	r := rand.New(rand.NewPCG(7, 11))
	for _, f := range []Half{BF16, F16} {
		for _, transB := range []bool{true, false} {
			for _, sh := range hmmShapes {
				m, k, n := sh[0], sh[1], sh[2]
				x, w := randSlice(r, m*k), randHalf(r, k*n, f)
				want, mag := refHMatmul(x, m, k, n, w, f, transB)
				// The honest bound for a float32 sum of k terms.
				tol := float64(k+2) * 0x1p-24
				name := fmt.Sprintf("%v/transB=%v/%dx%dx%d", f, transB, m, k, n)
				for _, v := range hmmVariants {
					setHmmForce(v.force)
					out := make([]float32, m*n)
					for i := range out {
						out[i] = float32(math.NaN()) // every output must be written
					}
					if err := HMatmul(x, m, k, n, w, f, transB, out); err != nil {
						t.Fatalf("%s/%s: %v", name, v.name, err)
					}
					assertClose(t, name+"/"+v.name, out, want, mag, tol)
				}
				setHmmForce(0)
				out := make([]float32, m*n)
				hmatmulGo(x, m, k, n, w, f, transB, out)
				assertClose(t, name+"/go", out, want, mag, tol)
			}
		}
	}
}

// TestHMatmulNonFinite puts an infinity and a NaN in W (the infinity in
// the last column of k, a vector tail) and a NaN in x: they reach exactly
// the outputs they touch, and every other output stays right.
func TestHMatmulNonFinite(t *testing.T) {
	withoutAMX(t) // the float32 paths, to their bound
	inf := map[Half]uint16{BF16: 0x7f80, F16: 0x7c00}
	nan := map[Half]uint16{BF16: 0x7fc1, F16: 0x7e01}
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range []Half{BF16, F16} {
		for _, transB := range []bool{true, false} {
			for _, m := range []int{1, 3, hmmGemmMinM + 1} {
				k, n := 37, 21
				x, w := randSlice(r, m*k), randHalf(r, k*n, f)
				at := func(p, j int) int {
					if transB {
						return j*k + p
					}
					return p*n + j
				}
				w[at(k-1, 2)] = inf[f] // +Inf in column 2 of out
				w[at(5, 7)] = nan[f]   // NaN in column 7
				if m > 1 {
					x[1*k+3] = float32(math.NaN()) // NaN in row 1
				}
				want, mag := refHMatmul(x, m, k, n, w, f, transB)
				for _, v := range hmmVariants {
					setHmmForce(v.force)
					out := make([]float32, m*n)
					if err := HMatmul(x, m, k, n, w, f, transB, out); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%v/transB=%v/m=%d/%s", f, transB, m, v.name)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							g, e := float64(out[i*n+j]), want[i*n+j]
							switch {
							case math.IsNaN(e) || math.IsInf(e, 0):
								if !(math.IsNaN(e) && math.IsNaN(g)) && g != e {
									t.Errorf("%s: out[%d,%d] = %v, want %v", name, i, j, g, e)
								}
							case math.Abs(g-e) > float64(k+2)*0x1p-24*mag[i*n+j]:
								t.Errorf("%s: out[%d,%d] = %v, want %v", name, i, j, g, e)
							}
						}
					}
					if !math.IsInf(want[2], 0) || !math.IsNaN(want[7]) {
						t.Fatalf("%s: the reference lost the planted values (%v, %v)", name, want[2], want[7])
					}
				}
				setHmmForce(0)
			}
		}
	}
}

func TestHMatmulBadInput(t *testing.T) {
	x, w, out := make([]float32, 6), make([]uint16, 12), make([]float32, 8)
	for _, c := range []struct {
		name    string
		m, k, n int
		w       []uint16
		f       Half
		out     []float32
	}{
		{"format", 2, 3, 4, w, Half(0), out},
		{"negative", -1, 3, 4, w, BF16, out},
		{"short x", 3, 3, 4, make([]uint16, 36), BF16, make([]float32, 12)},
		{"short w", 2, 3, 4, w[:11], F16, out},
		{"short out", 2, 3, 4, w, F16, out[:7]},
	} {
		if err := HMatmul(x, c.m, c.k, c.n, c.w, c.f, true, c.out); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// k == 0 is an empty sum: zeros.
	out[0] = 5
	if err := HMatmul(nil, 2, 0, 4, nil, BF16, true, out); err != nil || out[0] != 0 {
		t.Errorf("k=0: err %v, out[0] %v", err, out[0])
	}
}

// BenchmarkHMatmul covers a 0.5B model's projections (hidden 896, MLP
// 4864) at decode (m=1) and across the switch to tiles. GB/s counts the
// bytes of W read once.
func BenchmarkHMatmul(b *testing.B) {
	for _, f := range []Half{BF16, F16} {
		for _, sh := range [][2]int{{896, 896}, {896, 4864}, {4864, 896}} {
			for _, m := range []int{1, 4, hmmGemmMinM - 1, hmmGemmMinM, 512} {
				k, n := sh[0], sh[1]
				b.Run(fmt.Sprintf("%v/%dx%d/m=%d", f, k, n, m), func(b *testing.B) {
					r := rand.New(rand.NewPCG(3, 3))
					x, w, out := randSlice(r, m*k), randHalf(r, k*n, f), make([]float32, m*n)
					_ = HMatmul(x, m, k, n, w, f, true, out)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						_ = HMatmul(x, m, k, n, w, f, true, out)
					}
					s := b.Elapsed().Seconds()
					b.ReportMetric(2*float64(len(w))*float64(b.N)/s/1e9, "GB/s")
					b.ReportMetric(2*float64(m*n*k)*float64(b.N)/s/1e9, "GFLOP/s")
				})
			}
		}
	}
}
