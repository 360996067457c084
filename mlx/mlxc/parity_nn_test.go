package mlxc_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

func TestParityNN(t *testing.T) {
	needMLXC(t)
	for _, dt := range floats {
		rt, at := tol(dt)
		parity(t, "Softmax/"+dt.String(), rt, at, func() *mlx.Array { return mlx.Softmax(rnd(70, dt, -6, 6, 3, 4, 33), -1) })
		parity(t, "SoftmaxAxis0/"+dt.String(), rt, at, func() *mlx.Array { return mlx.Softmax(rnd(71, dt, -6, 6, 5, 3), 0) })
		parity(t, "LogSumExp/"+dt.String(), rt, at, func() *mlx.Array { return mlx.LogSumExp(rnd(72, dt, -6, 6, 3, 40), -1, true) })
		parity(t, "LogSoftmax/"+dt.String(), rt, at, func() *mlx.Array { return mlx.LogSoftmax(rnd(73, dt, -6, 6, 3, 40), -1) })
		parity(t, "RMSNorm/"+dt.String(), rt, at, func() *mlx.Array {
			return mlx.RMSNorm(rnd(74, dt, -3, 3, 2, 3, 64), rnd(75, dt, 0.5, 1.5, 64), 1e-5)
		})
		parity(t, "RMSNormNoWeight/"+dt.String(), rt, at, func() *mlx.Array { return mlx.RMSNorm(rnd(76, dt, -3, 3, 5, 48), nil, 1e-6) })
		parity(t, "LayerNorm/"+dt.String(), rt, at*10, func() *mlx.Array {
			return mlx.LayerNorm(rnd(77, dt, -3, 3, 2, 3, 64), rnd(78, dt, 0.5, 1.5, 64), rnd(79, dt, -1, 1, 64), 1e-5)
		})
		parity(t, "LayerNormNoAffine/"+dt.String(), rt, at*10, func() *mlx.Array { return mlx.LayerNorm(rnd(80, dt, -3, 3, 4, 40), nil, nil, 1e-5) })
		parity(t, "SwiGLU/"+dt.String(), rt+2e-6, at, func() *mlx.Array { return mlx.SwiGLU(rnd(81, dt, -6, 6, 3, 50), rnd(82, dt, -2, 2, 3, 50)) })
	}
	parity(t, "SoftmaxMaskedRow", 0, 0, func() *mlx.Array {
		ninf := float32(math.Inf(-1))
		return mlx.Softmax(mlx.FromSlice([]float32{ninf, ninf, ninf, 0, ninf, 1}, 2, 3), -1)
	})
	parity(t, "LogSumExpInf", 0, 0, func() *mlx.Array {
		ninf, inf := float32(math.Inf(-1)), float32(math.Inf(1))
		return mlx.LogSumExp(mlx.FromSlice([]float32{ninf, ninf, ninf, 0, inf, 1}, 2, 3), -1, false)
	})
}

func TestParityRoPE(t *testing.T) {
	needMLXC(t)
	cases := []struct {
		name string
		p    func() mlx.RoPEParams
	}{
		{"Default", func() mlx.RoPEParams { return mlx.RoPEParams{Dims: 32, Base: 10000} }},
		{"Traditional", func() mlx.RoPEParams { return mlx.RoPEParams{Dims: 32, Base: 10000, Traditional: true, Offset: 7} }},
		{"Partial", func() mlx.RoPEParams { return mlx.RoPEParams{Dims: 16, Base: 500000, Offset: 3} }},
		{"Scale", func() mlx.RoPEParams { return mlx.RoPEParams{Dims: 32, Base: 10000, Scale: 0.25, Offset: 100} }},
		{"Llama3Freqs", func() mlx.RoPEParams {
			return mlx.RoPEParams{Dims: 32, Freqs: mlx.Llama3RoPEFreqs(32, 500000, 8, 1, 4, 8192), Offset: 5}
		}},
		{"YarnMScale", func() mlx.RoPEParams {
			return mlx.RoPEParams{Dims: 32, Freqs: mlx.YarnRoPEFreqs(32, 10000, 4, 4096, 32, 1),
				MScale: float32(mlx.YarnMScale(4, 1, 0)), Offset: 2}
		}},
		{"PartialMScale", func() mlx.RoPEParams { return mlx.RoPEParams{Dims: 8, Base: 10000, MScale: 1.3, Traditional: true} }},
		// Gemma 4's proportional RoPE: pairs that do not turn have an
		// infinite wavelength.
		{"InfiniteWavelengths", func() mlx.RoPEParams {
			f := make([]float32, 16)
			for i := range f {
				f[i] = float32(math.Inf(1))
				if i < 4 {
					f[i] = float32(math.Pow(1e6, float64(2*i)/32))
				}
			}
			return mlx.RoPEParams{Dims: 32, Freqs: mlx.FromSlice(f), Offset: 9}
		}},
	}
	for _, c := range cases {
		for _, dt := range floats {
			rt, at := tol(dt)
			parity(t, c.name+"/"+dt.String(), rt+2e-6, at+2e-6, func() *mlx.Array {
				return mlx.RoPE(rnd(90, dt, -2, 2, 2, 3, 5, 32), c.p())
			})
		}
	}
	parity(t, "2D", 3e-6, 3e-6, func() *mlx.Array {
		return mlx.RoPE(rnd(91, mlx.Float32, -2, 2, 6, 16), mlx.RoPEParams{Dims: 16, Base: 10000, Offset: 4})
	})
}

func TestParitySDPA(t *testing.T) {
	needMLXC(t)
	type tc struct {
		B, Hq, Hkv, Lq, Lk, D int
		causal                bool
		window                int
		mask                  string // "", "bool", "add"
	}
	cases := []tc{
		{1, 1, 1, 1, 1, 8, false, 0, ""},
		{1, 4, 4, 5, 5, 16, true, 0, ""},
		{2, 4, 2, 3, 9, 16, true, 0, ""},  // GQA, causal aligned to the end
		{1, 4, 1, 1, 12, 32, true, 0, ""}, // decode
		{1, 2, 2, 6, 4, 8, true, 0, ""},   // more queries than keys: first rows see nothing
		{1, 2, 1, 7, 7, 16, true, 3, ""},  // sliding window
		{1, 2, 2, 4, 6, 8, false, 0, "bool"},
		{2, 2, 1, 4, 6, 8, false, 0, "add"},
		{1, 2, 2, 4, 6, 8, true, 0, "bool"}, // combined
		{1, 4, 2, 5, 8, 16, true, 2, "add"}, // window and additive
	}
	for _, c := range cases {
		for _, dt := range floats {
			rt, at := tol(dt)
			name := fmt.Sprintf("%v/%s", c, dt)
			parity(t, name, rt*4, 2e-6+at*4, func() *mlx.Array {
				q := rnd(100, dt, -1, 1, c.B, c.Hq, c.Lq, c.D)
				k := rnd(101, dt, -1, 1, c.B, c.Hkv, c.Lk, c.D)
				v := rnd(102, dt, -1, 1, c.B, c.Hkv, c.Lk, c.D)
				m := mlx.Mask{Causal: c.causal, Window: c.window}
				switch c.mask {
				case "bool":
					// row 1 entirely hidden: zeros on both backends
					s := make([]bool, c.Lq*c.Lk)
					r := rng(103)
					for i := range s {
						s[i] = r.IntN(3) > 0 && i/c.Lk != 1
					}
					m.Array = mlx.FromSlice(s, 1, 1, c.Lq, c.Lk)
				case "add":
					m.Array = rnd(104, mlx.Float32, -2, 0, c.B, 1, c.Lq, c.Lk)
				}
				return mlx.ScaledDotProductAttention(q, k, v, float32(1/math.Sqrt(float64(c.D))), m)
			})
		}
	}
}

func TestParityConvQuant(t *testing.T) {
	needMLXC(t)
	for _, dt := range floats {
		rt, at := tol(dt)
		for _, cv := range [][3]int{{1, 0, 1}, {1, 1, 1}, {2, 1, 1}, {1, 2, 2}} {
			parity(t, fmt.Sprintf("Conv1d%v/%s", cv, dt), rt*4, 1e-5+at*10, func() *mlx.Array {
				return mlx.Conv1d(rnd(110, dt, -1, 1, 2, 17, 6), rnd(111, dt, -1, 1, 5, 3, 6), cv[0], cv[1], cv[2])
			})
		}
	}
	for _, bits := range []int{2, 3, 4, 5, 6, 8} {
		for _, gs := range []int{32, 64, 128} {
			for _, dt := range floats {
				name := fmt.Sprintf("b%d/g%d/%s", bits, gs, dt)
				w := func() *mlx.Array { return rnd(uint64(120+bits), dt, -1, 1, 8, 256) }
				q := func() (wq, s, b *mlx.Array) {
					wq, s, b, err := mlx.Quantize(w(), gs, bits)
					if err != nil {
						panic(err)
					}
					return wq, s, b
				}
				parity(t, "Quantize/"+name, 0, 0, func() *mlx.Array {
					wq, s, b := q()
					return mlx.Concatenate([]*mlx.Array{mlx.AsType(wq, mlx.Float32), mlx.AsType(s, mlx.Float32), mlx.AsType(b, mlx.Float32)}, 1)
				})
				parity(t, "Dequantize/"+name, 0, 0, func() *mlx.Array { wq, s, b := q(); return mlx.Dequantize(wq, s, b, gs, bits) })
				rt, at := tol(dt)
				parity(t, "QuantizedMatmulT/"+name, rt*4, 1e-4+at*10, func() *mlx.Array {
					wq, s, b := q()
					return mlx.QuantizedMatmul(rnd(130, dt, -1, 1, 3, 256), wq, s, b, true, gs, bits)
				})
				parity(t, "QuantizedMatmul/"+name, rt*4, 1e-4+at*10, func() *mlx.Array {
					wq, s, b := q()
					return mlx.QuantizedMatmul(rnd(131, dt, -1, 1, 2, 8), wq, s, b, false, gs, bits)
				})
			}
		}
	}
	parity(t, "TakeQuantized", 0, 0, func() *mlx.Array {
		wq, s, b, err := mlx.Quantize(rnd(140, mlx.Float32, -1, 1, 10, 64), 32, 4)
		if err != nil {
			panic(err)
		}
		return mlx.TakeQuantized(wq, s, b, mlx.FromSlice([]int32{3, 9, 0}, 3), 32, 4)
	})
}
