package mlx_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// refE2M1 is an FP4 code's value from the OCP MX definition: sign bit,
// two exponent bits with bias 1 (exponent 0: subnormal, 0.5 * mantissa),
// one mantissa bit.
func refE2M1(c uint32) float64 {
	sign := 1.0
	if c&8 != 0 {
		sign = -1
	}
	e, m := int(c>>1&3), float64(c&1)
	if e == 0 {
		return sign * 0.5 * m
	}
	return sign * math.Ldexp(1+0.5*m, e-1)
}

// refE8M0 is a scale byte's value: 2^(s-127), NaN for 255.
func refE8M0(s uint8) float64 {
	if s == 255 {
		return math.NaN()
	}
	return math.Pow(2, float64(s)-127)
}

// refMXFP4 decodes packed words and scales into float64 from the
// definitions above: value i of a row is code i%8 of word i/8 (four bits
// each, lowest first), times the scale of block i/32.
func refMXFP4(words []uint32, scales []uint8) []float64 {
	out := make([]float64, 8*len(words))
	for i := range out {
		code := words[i/8] >> (4 * (i % 8)) & 15
		out[i] = refE2M1(code) * refE8M0(scales[i/32])
	}
	return out
}

// handBlocks are MXFP4 blocks made by hand: every code in every position,
// and scales at the edges of E8M0 (2^-127, 2^0, 2^127, NaN) and between.
func handBlocks() (words []uint32, scales []uint8) {
	scales = []uint8{0, 1, 100, 126, 127, 128, 200, 254, 255}
	for b := range scales {
		for j := 0; j < 4; j++ {
			var w uint32
			for i := 0; i < 8; i++ {
				w |= uint32((i+3*j+5*b)%16) << (4 * i) // each code at each nibble across blocks
			}
			words = append(words, w)
		}
	}
	return words, scales
}

// Dequantizing MXFP4 reproduces the format's definition bit for bit, on
// hand-made blocks that cover every code and the E8M0 extremes: the
// values are exact (E2M1 times a power of two) and negative zero keeps its
// sign; past float32's range (6 * 2^127) they are infinite.
func TestDequantizeMXFP4BitExact(t *testing.T) {
	leakFree(t)
	words, scales := handBlocks()
	want := refMXFP4(words, scales)
	got := make([]float32, len(want))
	mlx.DecodeMXFP4(got, words, scales)
	wq := mlx.FromSlice(words, 3, 12) // 3 rows of 96 values
	ws := mlx.FromSlice(scales, 3, 3)
	d := mlx.Dequantize(wq, ws, nil, 32, 4)
	defer mlx.Free(wq, ws, d)
	shapeEq(t, "Dequantize", d, 3, 96)
	for name, vals := range map[string][]float32{"DecodeMXFP4": got, "Dequantize": d.Float32s()} {
		for i, w := range want {
			g := vals[i]
			if math.IsNaN(w) {
				if !math.IsNaN(float64(g)) {
					t.Fatalf("%s[%d] = %g, want NaN (scale 255)", name, i, g)
				}
				continue
			}
			// float32(w) is w exactly, or ±Inf past float32's range
			// (2^127 times 3, 4 or 6), as for every float32 result
			w32 := float32(w)
			if math.Float32bits(g) != math.Float32bits(w32) || !math.IsInf(float64(w32), 0) && float64(w32) != w {
				t.Fatalf("%s[%d] = %g (%#x), want %g", name, i, g, math.Float32bits(g), w)
			}
		}
	}
}

// mxMatrix is a random MXFP4 matrix [rows, cols] with scales around 2^-3.
func mxMatrix(rng *rand.Rand, rows, cols int) ([]uint32, []uint8) {
	words := make([]uint32, rows*cols/8)
	for i := range words {
		words[i] = rng.Uint32()
	}
	scales := make([]uint8, rows*cols/32)
	for i := range scales {
		scales[i] = uint8(122 + rng.IntN(6))
	}
	return words, scales
}

// QuantizedMatmul and GatherQMM with MXFP4 weights (nil biases) equal the
// float64 product with the matrix decoded from the definition.
func TestMXFP4MatmulMatchesReference(t *testing.T) {
	leakFree(t)
	checkMXFP4Matmul(t, newRNG(160))
}

func checkMXFP4Matmul(t *testing.T, rng *rand.Rand) {
	for _, transpose := range []bool{true, false} {
		for _, sh := range [][3]int{{1, 64, 96}, {5, 96, 32}, {3, 256, 160}} {
			m, k, n := sh[0], sh[1], sh[2]
			rows, cols := n, k
			if !transpose {
				rows, cols = k, n
			}
			words, scales := mxMatrix(rng, rows, cols)
			w := refMXFP4(words, scales)
			xd := randSlice(rng, m*k, -1, 1)
			x := mlx.FromSlice(xd, m, k)
			wq := mlx.FromSlice(words, rows, cols/8)
			ws := mlx.FromSlice(scales, rows, cols/32)
			got := mlx.QuantizedMatmul(x, wq, ws, nil, transpose, 32, 4)
			shapeEq(t, "QuantizedMatmul", got, m, n)
			closeTo(t, fmt.Sprintf("QuantizedMatmul %v T=%v", sh, transpose), got.Float32s(), refGather(xd, w, []int{0}, []int{0}, m, k, n, transpose), 1e-5, 1e-5)
			mlx.Free(x, wq, ws, got)
		}
	}
	for _, c := range gatherCases() {
		for _, transpose := range []bool{true, false} {
			c.k, c.n = 64, 96
			nA, nE := size(c.aBatch), size(c.bBatch)
			rows, cols := c.n, c.k
			if !transpose {
				rows, cols = c.k, c.n
			}
			words, scales := mxMatrix(rng, nE*rows, cols)
			w := refMXFP4(words, scales)
			xd := randSlice(rng, nA*c.m*c.k, -1, 1)
			x := mlx.FromSlice(xd, append(append([]int(nil), c.aBatch...), c.m, c.k)...)
			pw := mlx.FromSlice(words, append(append([]int(nil), c.bBatch...), rows, cols/8)...)
			ps := mlx.FromSlice(scales, append(append([]int(nil), c.bBatch...), rows, cols/32)...)
			lhs, rhs := indexArray(c.lhs, c.lShape), indexArray(c.rhs, c.rShape)
			got := mlx.GatherQMM(x, pw, ps, nil, lhs, rhs, transpose, 32, 4, false)
			batch, li, ri := c.flatIndices()
			shapeEq(t, "GatherQMM", got, append(append([]int(nil), batch...), c.m, c.n)...)
			closeTo(t, fmt.Sprintf("GatherQMM %s T=%v", c.name, transpose), got.Float32s(), refGather(xd, w, li, ri, c.m, c.k, c.n, transpose), 1e-5, 1e-5)
			mlx.Free(x, pw, ps, lhs, rhs, got)
		}
	}
}

// A QuantMatrix holds MXFP4 too: MatmulT, Take and Dequantize give the
// decoded matrix's values.
func TestQuantMatrixMXFP4(t *testing.T) {
	leakFree(t)
	rng := newRNG(161)
	words, scales := mxMatrix(rng, 6, 64)
	w := refMXFP4(words, scales)
	q := mlx.NewQuantMatrix(mlx.FromSlice(words, 6, 8), mlx.FromSlice(scales, 6, 2), nil, 32, 4)
	defer func() { mlx.Free(q.Arrays()...) }()
	if len(q.Arrays()) != 2 {
		t.Fatalf("an MXFP4 matrix holds %d arrays, want 2 (no biases)", len(q.Arrays()))
	}
	for _, a := range q.Pack() {
		a.Free()
	}
	ids := mlx.FromSlice([]int{4, 0, 4}, 3)
	rowsGot := q.Take(ids)
	all := q.Dequantize()
	defer mlx.Free(ids, rowsGot, all)
	for i, g := range all.Float32s() {
		if float64(g) != w[i] {
			t.Fatalf("Dequantize[%d] = %g, want %g", i, g, w[i])
		}
	}
	for r, id := range []int{4, 0, 4} {
		for c := 0; c < 64; c++ {
			if g := rowsGot.Float32s()[r*64+c]; float64(g) != w[id*64+c] {
				t.Fatalf("Take row %d col %d = %g, want %g", r, c, g, w[id*64+c])
			}
		}
	}
	xd := randSlice(rng, 2*64, -1, 1)
	x := mlx.FromSlice(xd, 2, 64)
	y := q.MatmulT(x)
	defer mlx.Free(x, y)
	closeTo(t, "MatmulT", y.Float32s(), refGather(xd, w, []int{0}, []int{0}, 2, 64, 6, true), 1e-5, 1e-5)
}

// QuantizeMXFP4 picks each block's scale as 2^round(log2(max|w|/6)) and
// each value's nearest E2M1 code (ties to even, saturating at 6); values
// already on that grid come back exactly.
func TestQuantizeMXFP4(t *testing.T) {
	leakFree(t)
	rng := newRNG(162)
	vals := randSlice(rng, 4*64, -3, 3)
	copy(vals[:32], []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5, -6, 7, -7, 0, 0.1, 0.3})
	w := mlx.FromSlice(vals, 4, 64)
	wq, sc, err := mlx.QuantizeMXFP4(w)
	if err != nil {
		t.Fatal(err)
	}
	d := mlx.Dequantize(wq, sc, nil, 32, 4)
	defer mlx.Free(w, wq, sc, d)
	got, scales := d.Float32s(), sc.Uint8s()
	grid := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	for b, s := range scales {
		amax := 0.0
		for _, v := range vals[32*b : 32*b+32] {
			amax = math.Max(amax, math.Abs(float64(v)))
		}
		if want := int(math.Round(math.Log2(amax/6))) + 127; int(s) != want {
			t.Fatalf("block %d: scale %d, want %d", b, s, want)
		}
		mul := refE8M0(s)
		for i := 32 * b; i < 32*b+32; i++ {
			x := math.Abs(float64(vals[i])) / mul
			best := 0
			for j, g := range grid {
				d, bd := math.Abs(x-g), math.Abs(x-grid[best])
				if d < bd || d == bd && j%2 == 0 && best%2 == 1 {
					best = j
				}
			}
			want := math.Copysign(grid[best]*mul, float64(vals[i]))
			if float64(got[i]) != want && !(want == 0 && got[i] == 0) {
				t.Fatalf("value %d = %g quantized to %g, want %g (scale 2^%d)", i, vals[i], got[i], want, int(s)-127)
			}
		}
	}
	// on the grid: exact
	exact := mlx.FromSlice(got, 4, 64)
	eq, es, err := mlx.QuantizeMXFP4(exact)
	if err != nil {
		t.Fatal(err)
	}
	back := mlx.Dequantize(eq, es, nil, 32, 4)
	defer mlx.Free(exact, eq, es, back)
	for i, v := range back.Float32s() {
		if v != got[i] {
			t.Fatalf("requantizing grid value %g gave %g", got[i], v)
		}
	}
}

// Without the backend's MXFP4 kernels (a backend that has none, such as
// mlxc today) the ops expand the matrices they use and give the same
// values.
func TestMXFP4ComposedFallback(t *testing.T) {
	leakFree(t)
	prev := mlx.DefaultBackend()
	if _, ok := prev.(mlx.MXFP4er); !ok {
		t.Skipf("backend %s has no MXFP4 kernels: the other tests already ran the composed path", prev.Name())
	}
	mlx.RegisterBackend("plain-"+prev.Name(), "", func() (mlx.Backend, error) { return plainBackend{prev}, nil })
	if err := mlx.SetBackend("plain-" + prev.Name()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := mlx.SetBackend(prev.Name()); err != nil {
			t.Fatal(err)
		}
	}()
	checkMXFP4Matmul(t, newRNG(163))
}

// MXFP4 arguments that do not fit the mode panic naming the op.
func TestMXFP4RejectsBadInput(t *testing.T) {
	leakFree(t)
	wq := mlx.Zeros([]int{4, 8}, mlx.Uint32)
	s8 := mlx.Zeros([]int{4, 2}, mlx.Uint8)
	sf := mlx.Zeros([]int{4, 2}, mlx.Float32)
	x := mlx.Zeros([]int{1, 64}, mlx.Float32)
	defer mlx.Free(wq, s8, sf, x)
	for name, f := range map[string]func() *mlx.Array{
		"float scales": func() *mlx.Array { return mlx.QuantizedMatmul(x, wq, sf, nil, true, 32, 4) },
		"group 64":     func() *mlx.Array { return mlx.Dequantize(wq, s8, nil, 64, 4) },
		"8 bits":       func() *mlx.Array { return mlx.Dequantize(wq, s8, nil, 32, 8) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				} else if s := fmt.Sprint(r); !contains(s, "mlx.") || !contains(s, "mxfp4") {
					t.Errorf("%s: panic %q does not name the op and mode", name, s)
				}
			}()
			f().Free()
		}()
	}
	if err := mlx.CheckQuantMode("nvfp4", 16, 4); err == nil || !contains(err.Error(), "nvfp4") {
		t.Errorf("CheckQuantMode(nvfp4) = %v, want an error naming it", err)
	}
}
