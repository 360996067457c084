package mlx_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"hark/mlx"
)

func refSoftmax(row []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, v)
	}
	s := 0.0
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

func TestSoftmaxLogSumExp(t *testing.T) {
	leakFree(t)
	r := newRNG(30)
	for _, shape := range [][]int{{1}, {7}, {3, 17}, {2, 5, 33}, {4, 1000}} {
		for axis := -1; axis >= -len(shape); axis-- {
			n := size(shape)
			xd := randSlice(r, n, -20, 20)
			xd[0] = 80 // large values must not overflow
			x := mlx.FromSlice(xd, shape...)
			sm := mlx.Softmax(x, axis)
			lse := mlx.LogSumExp(x, axis, true)
			ax := len(shape) + axis
			lshape := append([]int(nil), shape...)
			lshape[ax] = 1
			want, wantL := refSoftmaxAxis(f64s(xd), shape, ax)
			name := fmt.Sprint(shape, axis)
			closeTo(t, "Softmax"+name, sm.Float32s(), want, 1e-5, 1e-7)
			shapeEq(t, "LogSumExp", lse, lshape...)
			closeTo(t, "LogSumExp"+name, lse.Float32s(), wantL, 1e-6, 1e-6)
			// f16: computed in f32 (precise), rounded once
			xh := mlx.AsType(x, mlx.Float16)
			smh := mlx.Softmax(xh, axis)
			if smh.DType() != mlx.Float16 {
				t.Fatal("softmax f16 dtype")
			}
			wantH, _ := refSoftmaxAxis(f64s(xh.Float32s()), shape, ax)
			for i := range wantH {
				wantH[i] = f16Round(wantH[i])
			}
			closeTo(t, "Softmax f16"+name, smh.Float32s(), wantH, 1e-3, 1e-6)
			mlx.Free(x, sm, lse, xh, smh)
		}
	}
	x := mlx.FromSlice([]float32{1, 2, 3})
	ls := mlx.LogSoftmax(x, 0)
	l0 := mlx.LogSumExp(x, 0, false)
	shapeEq(t, "LogSumExp nokeep", l0)
	closeTo(t, "LogSoftmax", ls.Float32s(), []float64{-2.40760596, -1.40760596, -0.40760596}, 1e-6, 1e-6)
	mlx.Free(x, ls, l0)
}

func TestRMSNormLayerNorm(t *testing.T) {
	leakFree(t)
	r := newRNG(31)
	for _, shape := range [][]int{{1, 1}, {3, 7}, {2, 2, 64}, {5, 4099}} {
		d := shape[len(shape)-1]
		xd, wd, bd := randSlice(r, size(shape), -3, 3), randSlice(r, d, 0.5, 1.5), randSlice(r, d, -1, 1)
		x, w, b := mlx.FromSlice(xd, shape...), mlx.FromSlice(wd, d), mlx.FromSlice(bd, d)
		eps := float32(1e-5)
		rn, rn0 := mlx.RMSNorm(x, w, eps), mlx.RMSNorm(x, nil, eps)
		ln, ln0 := mlx.LayerNorm(x, w, b, eps), mlx.LayerNorm(x, nil, nil, eps)
		rows := size(shape) / d
		wr, wr0, wl, wl0 := make([]float64, len(xd)), make([]float64, len(xd)), make([]float64, len(xd)), make([]float64, len(xd))
		for i := 0; i < rows; i++ {
			ss, mean := 0.0, 0.0
			for j := 0; j < d; j++ {
				v := float64(xd[i*d+j])
				ss += v * v
				mean += v
			}
			mean /= float64(d)
			vr := 0.0
			for j := 0; j < d; j++ {
				dv := float64(xd[i*d+j]) - mean
				vr += dv * dv
			}
			inv := 1 / math.Sqrt(ss/float64(d)+float64(eps))
			linv := 1 / math.Sqrt(vr/float64(d)+float64(eps))
			for j := 0; j < d; j++ {
				v := float64(xd[i*d+j])
				wr0[i*d+j] = v * inv
				wr[i*d+j] = v * inv * float64(wd[j])
				wl0[i*d+j] = (v - mean) * linv
				wl[i*d+j] = (v-mean)*linv*float64(wd[j]) + float64(bd[j])
			}
		}
		name := fmt.Sprint(shape)
		closeTo(t, "RMSNorm"+name, rn.Float32s(), wr, 1e-5, 1e-6)
		closeTo(t, "RMSNorm nil"+name, rn0.Float32s(), wr0, 1e-5, 1e-6)
		closeTo(t, "LayerNorm"+name, ln.Float32s(), wl, 1e-5, 1e-5)
		closeTo(t, "LayerNorm nil"+name, ln0.Float32s(), wl0, 1e-5, 1e-5)
		xb := mlx.AsType(x, mlx.BFloat16)
		rb := mlx.RMSNorm(xb, w, eps)
		if rb.DType() != mlx.BFloat16 {
			t.Fatal("rmsnorm bf16 dtype")
		}
		closeTo(t, "RMSNorm bf16"+name, rb.Float32s(), wr, 2e-2, 1e-2)
		mlx.Free(x, w, b, rn, rn0, ln, ln0, xb, rb)
	}
}

// refRoPE rotates with float64 trigonometry straight from the definition.
func refRoPE(x []float32, shape []int, dims int, trad bool, base, scale float64, offset int, freqs []float64, mscale float64) []float64 {
	d, l := shape[len(shape)-1], shape[len(shape)-2]
	out := f64s(x)
	for row := 0; row < size(shape)/d; row++ {
		pos := float64(offset + row%l)
		for i := 0; i < dims/2; i++ {
			var th float64
			if freqs != nil {
				th = scale * pos / freqs[i]
			} else {
				th = scale * pos * math.Pow(base, -2*float64(i)/float64(dims))
			}
			a, b := row*d+2*i, row*d+2*i+1
			if !trad {
				a, b = row*d+i, row*d+i+dims/2
			}
			x1, x2 := float64(x[a])*mscale, float64(x[b])*mscale
			out[a] = x1*math.Cos(th) - x2*math.Sin(th)
			out[b] = x1*math.Sin(th) + x2*math.Cos(th)
		}
	}
	return out
}

func TestRoPE(t *testing.T) {
	leakFree(t)
	r := newRNG(32)
	for _, c := range []struct {
		shape       []int
		dims        int
		trad        bool
		base, scale float64
		offset      int
		withFreqs   bool
		mscale      float64
	}{
		{[]int{1, 1, 5, 8}, 8, false, 10000, 1, 0, false, 1},
		{[]int{1, 2, 7, 16}, 16, true, 10000, 1, 3, false, 1},
		{[]int{2, 3, 4, 12}, 8, false, 500000, 0.5, 100, false, 1}, // partial rotary
		{[]int{1, 2, 3, 10}, 6, true, 10000, 1, 7, false, 1},
		{[]int{1, 4, 2, 16}, 16, false, 0, 1, 4000, true, 1.2},
		{[]int{6, 32}, 32, false, 1e6, 1, 0, false, 1},
	} {
		xd := randSlice(r, size(c.shape), -1, 1)
		x := mlx.FromSlice(xd, c.shape...)
		p := mlx.RoPEParams{Dims: c.dims, Traditional: c.trad, Base: float32(c.base), Scale: float32(c.scale), Offset: c.offset, MScale: float32(c.mscale)}
		var fr []float64
		if c.withFreqs {
			f := randSlice(r, c.dims/2, 1, 1000)
			fr = f64s(f)
			p.Freqs = mlx.FromSlice(f)
		}
		y := mlx.RoPE(x, p)
		want := refRoPE(xd, c.shape, c.dims, c.trad, c.base, c.scale, c.offset, fr, c.mscale)
		closeTo(t, fmt.Sprint("RoPE", c), y.Float32s(), want, 1e-5, 2e-6)
		xh := mlx.AsType(x, mlx.Float16)
		yh := mlx.RoPE(xh, p)
		closeTo(t, fmt.Sprint("RoPE f16", c), yh.Float32s(), want, 2e-3, 2e-3)
		mlx.Free(x, y, p.Freqs, xh, yh)
	}
}

// TestRoPETableReuse: the cos/sin table of the last call is reused when
// dims, base, scale, offset and length all match; changing any one of them
// (and coming back) must still give the reference rotation.
func TestRoPETableReuse(t *testing.T) {
	leakFree(t)
	r := newRNG(33)
	type cfg struct {
		l, dims     int
		base, scale float64
		offset      int
	}
	base := cfg{3, 8, 10000, 1, 5}
	seq := []cfg{base, {4, 8, 10000, 1, 5}, base, {3, 6, 10000, 1, 5}, base, {3, 8, 500, 1, 5}, base,
		{3, 8, 10000, 0.5, 5}, base, {3, 8, 10000, 1, 6}, base, base}
	for i, c := range seq {
		shape := []int{1, 2, c.l, 8}
		xd := randSlice(r, size(shape), -1, 1)
		x := mlx.FromSlice(xd, shape...)
		y := mlx.RoPE(x, mlx.RoPEParams{Dims: c.dims, Base: float32(c.base), Scale: float32(c.scale), Offset: c.offset})
		closeTo(t, fmt.Sprint("RoPE call ", i, c), y.Float32s(), refRoPE(xd, shape, c.dims, false, c.base, c.scale, c.offset, nil, 1), 1e-5, 2e-6)
		mlx.Free(x, y)
	}
}

func TestRoPEFrequencyHelpers(t *testing.T) {
	leakFree(t)
	// Llama 3.1 8B config: theta 500000, factor 8, low 1, high 4, orig 8192.
	f := mlx.Llama3RoPEFreqs(128, 500000, 8, 1, 4, 8192)
	got := f.Float32s()
	f.Free()
	if len(got) != 64 {
		t.Fatalf("len %d", len(got))
	}
	for i, g := range got {
		base := math.Pow(500000, float64(2*i)/128)
		wave := 2 * math.Pi * base
		var want float64
		switch {
		case wave < 8192.0/4: // high frequency: untouched
			want = base
		case wave > 8192.0/1: // low frequency: stretched by factor
			want = base * 8
		default:
			smooth := (8192/wave - 1) / (4 - 1)
			// interpolate the angular frequency between 1/(8*base) and 1/base
			want = 1 / ((1-smooth)/(8*base) + smooth/base)
		}
		if math.Abs(float64(g)-want) > 1e-5*want {
			t.Fatalf("llama3 freq %d: %v want %v", i, g, want)
		}
	}
	if got[0] != 1 || got[63] < 8*float32(math.Pow(500000, 126.0/128))*0.9999 {
		t.Fatalf("llama3 endpoints %v %v", got[0], got[63])
	}
	// YaRN: the fastest pairs are kept, the slowest stretched by factor.
	y := mlx.YarnRoPEFreqs(64, 10000, 4, 4096, 32, 1)
	yg := y.Float32s()
	y.Free()
	if yg[0] != 1 || math.Abs(float64(yg[31])/math.Pow(10000, 62.0/64)-4) > 1e-4 {
		t.Fatalf("yarn endpoints %v %v", yg[0], yg[31])
	}
	for i := 1; i < len(yg); i++ {
		if yg[i] <= yg[i-1] {
			t.Fatalf("yarn wavelengths must increase: %v", yg)
		}
	}
	if m := mlx.YarnMScale(4, 1, 0); math.Abs(m-(0.1*math.Log(4)+1)) > 1e-12 {
		t.Fatalf("YarnMScale %v", m)
	}
	if m := mlx.YarnMScale(4, 1, 1); m != 1 {
		t.Fatalf("YarnMScale equal %v", m)
	}
}

// refSoftmaxAxis returns softmax and logsumexp of x along axis ax.
func refSoftmaxAxis(xd []float64, shape []int, ax int) ([]float64, []float64) {
	lshape := append([]int(nil), shape...)
	lshape[ax] = 1
	want := make([]float64, len(xd))
	wantL := make([]float64, size(lshape))
	st := strides(shape)
	for i := 0; i < size(lshape); i++ {
		idx := unravel(i, lshape)
		base := 0
		for d := range idx {
			base += idx[d] * st[d]
		}
		row := make([]float64, shape[ax])
		for j := range row {
			row[j] = xd[base+j*st[ax]]
		}
		s := refSoftmax(row)
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		acc := 0.0
		for j := range row {
			want[base+j*st[ax]] = s[j]
			acc += math.Exp(row[j] - m)
		}
		wantL[i] = m + math.Log(acc)
	}
	return want, wantL
}

func TestLongRoPEAndRepeat(t *testing.T) {
	leakFree(t)
	f := mlx.LongRoPEFreqs(4, 10000, []float64{1, 2})
	defer f.Free()
	closeTo(t, "LongRoPEFreqs", f.Float32s(), []float64{1, 2 * 100}, 1e-7, 0)
	if m := mlx.LongRoPEMScale(131072, 4096); math.Abs(m-math.Sqrt(1+math.Log(32)/math.Log(4096))) > 1e-12 {
		t.Fatalf("LongRoPEMScale %v", m)
	}
	if mlx.LongRoPEMScale(4096, 4096) != 1 {
		t.Fatal("no scaling expected")
	}
	x := mlx.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	r0, r1 := mlx.Repeat(x, 2, 0), mlx.Repeat(x, 3, -1)
	defer mlx.Free(x, r0, r1)
	shapeEq(t, "Repeat0", r0, 4, 2)
	if fmt.Sprint(r0.Float32s(), r1.Float32s()) != "[1 2 1 2 3 4 3 4] [1 1 1 2 2 2 3 3 3 4 4 4]" {
		t.Fatalf("Repeat %v %v", r0.Float32s(), r1.Float32s())
	}
}

// SwiGLU equals Mul(Silu(gate), up) bit for bit: on whole arrays, on the
// two halves of one fused projection (views), on sizes that leave SIMD
// tails, on rows long enough to be split across threads and on a batch
// of rows split across threads (a prefill's halves, read in place); a bf16 pair
// takes the composition. Mismatched inputs panic with the op's name.
func TestSwiGLU(t *testing.T) {
	leakFree(t)
	sc := mlx.NewScope()
	defer sc.Close()
	r := newRNG(41)
	for _, shape := range [][]int{{1}, {3, 7}, {1, 1, 4864}, {2, 5, 33}, {1, 40000}, {1, 64, 1000}} {
		g := mlx.FromSlice(randSlice(r, size(shape), -12, 12), shape...)
		u := mlx.FromSlice(randSlice(r, size(shape), -3, 3), shape...)
		want := mlx.Mul(mlx.Silu(g), u)
		if d := maxDiffF32(mlx.SwiGLU(g, u).Float32s(), want.Float32s()); d != 0 {
			t.Errorf("%v: SwiGLU differs from Mul(Silu(g), u) by %g", shape, d)
		}
		joined := mlx.Concatenate([]*mlx.Array{g, u}, -1)
		last := len(shape) - 1
		parts := mlx.Split(joined, []int{shape[last]}, -1)
		if d := maxDiffF32(mlx.SwiGLU(parts[0], parts[1]).Float32s(), want.Float32s()); d != 0 {
			t.Errorf("%v: SwiGLU of split views differs by %g", shape, d)
		}
	}
	g16 := mlx.AsType(mlx.FromSlice(randSlice(r, 100, -4, 4), 100), mlx.BFloat16)
	u16 := mlx.AsType(mlx.FromSlice(randSlice(r, 100, -4, 4), 100), mlx.BFloat16)
	got := mlx.SwiGLU(g16, u16)
	if got.DType() != mlx.BFloat16 {
		t.Fatalf("bf16 SwiGLU gives %v", got.DType())
	}
	if d := maxDiffF32(got.Float32s(), mlx.Mul(mlx.Silu(g16), u16).Float32s()); d != 0 {
		t.Errorf("bf16 SwiGLU differs from its composition by %g", d)
	}
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "mlx.SwiGLU") {
			t.Fatalf("mismatched shapes: panic %q, want one naming mlx.SwiGLU", msg)
		}
	}()
	mlx.SwiGLU(mlx.FromSlice([]float32{1, 2}, 2), mlx.FromSlice([]float32{1, 2, 3}, 3))
}

func maxDiffF32(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}
