package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

func benchArr(shape ...int) *mlx.Array {
	return mlx.FromSlice(randSlice(newRNG(99), size(shape), -1, 1), shape...)
}

func BenchmarkElementwise(b *testing.B) {
	x, y := benchArr(1<<20), benchArr(1<<20)
	row := benchArr(4096)
	m := benchArr(256, 4096)
	xh := mlx.AsType(x, mlx.Float16)
	defer mlx.Free(x, y, row, m, xh)
	cases := []struct {
		name string
		f    func() *mlx.Array
	}{
		{"Add_1M", func() *mlx.Array { return mlx.Add(x, y) }},
		{"Mul_bcast_256x4096", func() *mlx.Array { return mlx.Mul(m, row) }},
		{"MulScalar_1M", func() *mlx.Array { return mlx.MulScalar(x, 0.5) }},
		{"Silu_1M", func() *mlx.Array { return mlx.Silu(x) }},
		{"Gelu_1M", func() *mlx.Array { return mlx.Gelu(x) }},
		{"Add_f16_1M", func() *mlx.Array { return mlx.Add(xh, xh) }},
		{"Add_decode_4096", func() *mlx.Array { return mlx.Add(row, row) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f().Free()
			}
		})
	}
}

func BenchmarkSoftmax(b *testing.B) {
	for _, shape := range [][]int{{1, 32000}, {1, 151936}, {32, 4096}} {
		x := benchArr(shape...)
		b.Run(fmt.Sprint(shape), func(b *testing.B) {
			for b.Loop() {
				mlx.Softmax(x, -1).Free()
			}
		})
		x.Free()
	}
}

func BenchmarkRMSNorm(b *testing.B) {
	w := benchArr(4096)
	defer w.Free()
	for _, rows := range []int{1, 512} {
		x := benchArr(rows, 4096)
		b.Run(fmt.Sprint(rows, "x4096"), func(b *testing.B) {
			for b.Loop() {
				mlx.RMSNorm(x, w, 1e-5).Free()
			}
		})
		x.Free()
	}
}

func BenchmarkRoPE(b *testing.B) {
	for _, l := range []int{1, 512} {
		x := benchArr(1, 32, l, 128)
		b.Run(fmt.Sprintf("1x32x%dx128", l), func(b *testing.B) {
			for b.Loop() {
				mlx.RoPE(x, mlx.RoPEParams{Dims: 128, Base: 500000, Offset: 100}).Free()
			}
		})
		x.Free()
	}
}

func BenchmarkSDPA(b *testing.B) {
	type c struct {
		name               string
		hq, hkv, lq, lk, d int
		mask               mlx.Mask
	}
	cases := []c{
		{"decode_1q_1k", 32, 8, 1, 1, 128, mlx.CausalMask()},
		{"decode_1q_512k", 32, 8, 1, 512, 128, mlx.CausalMask()},
		{"decode_1q_4096k", 32, 8, 1, 4096, 128, mlx.CausalMask()},
		{"prefill_512", 32, 8, 512, 512, 128, mlx.CausalMask()},
		{"whisper_enc_tiny_1500", 6, 6, 1500, 1500, 64, mlx.Mask{}},
		{"whisper_cross_1q_1500", 8, 8, 1, 1500, 64, mlx.Mask{}},
		{"whisper_dec_self_1q_64", 8, 8, 1, 64, 64, mlx.CausalMask()},
	}
	for _, cs := range cases {
		q := benchArr(1, cs.hq, cs.lq, cs.d)
		k := benchArr(1, cs.hkv, cs.lk, cs.d)
		v := benchArr(1, cs.hkv, cs.lk, cs.d)
		scale := float32(1 / math.Sqrt(float64(cs.d)))
		b.Run(cs.name, func(b *testing.B) {
			for b.Loop() {
				mlx.ScaledDotProductAttention(q, k, v, scale, cs.mask).Free()
			}
		})
		mlx.Free(q, k, v)
	}
}

func BenchmarkTake(b *testing.B) {
	emb := benchArr(32000, 1024)
	defer emb.Free()
	for _, n := range []int{1, 512} {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(i * 37 % 32000)
		}
		idx := mlx.FromSlice(ids, 1, n)
		b.Run(fmt.Sprint(n, "tokens"), func(b *testing.B) {
			for b.Loop() {
				mlx.Take(emb, idx, 0).Free()
			}
		})
		idx.Free()
	}
}

func BenchmarkMatmul(b *testing.B) {
	w := benchArr(4096, 1024)
	defer w.Free()
	for _, rows := range []int{1, 128} {
		x := benchArr(rows, 1024)
		b.Run(fmt.Sprintf("%dx1024_T4096", rows), func(b *testing.B) {
			for b.Loop() {
				mlx.MatmulT(x, w).Free()
			}
		})
		x.Free()
	}
}

func BenchmarkQuantizedMatmul(b *testing.B) {
	w := benchArr(4096, 1024)
	wq, s, bi, _ := mlx.Quantize(w, 64, 4)
	defer mlx.Free(w, wq, s, bi)
	x := benchArr(1, 1024)
	defer x.Free()
	b.Run("1x1024_T4096_4bit", func(b *testing.B) {
		for b.Loop() {
			mlx.QuantizedMatmul(x, wq, s, bi, true, 64, 4).Free()
		}
	})
}

func BenchmarkSampling(b *testing.B) {
	x := benchArr(1, 151936)
	defer x.Free()
	b.Run("ArgSort_151936", func(b *testing.B) {
		for b.Loop() {
			mlx.ArgSort(x, -1).Free()
		}
	})
	b.Run("TopK50_151936", func(b *testing.B) {
		for b.Loop() {
			mlx.ArgTopK(x, 50, -1).Free()
		}
	})
	b.Run("Cumsum_151936", func(b *testing.B) {
		for b.Loop() {
			mlx.Cumsum(x, -1, false, true).Free()
		}
	})
}

// BenchmarkDecodeOps times the non-matmul ops of one decode step of a
// 0.5B model (hidden 896, MLP 4864, 14 query and 2 KV heads, 256 cached
// positions): each runs 24 times per token, so microseconds here are
// tenths of a millisecond per token.
func BenchmarkDecodeOps(b *testing.B) {
	h, f := benchArr(1, 1, 896), benchArr(1, 1, 4864)
	w := benchArr(896)
	q := benchArr(1, 14, 1, 64)
	k, v := benchArr(1, 2, 256, 64), benchArr(1, 2, 256, 64)
	cases := []struct {
		name string
		f    func() *mlx.Array
	}{
		{"RMSNorm896", func() *mlx.Array { return mlx.RMSNorm(h, w, 1e-6) }},
		{"Add896", func() *mlx.Array { return mlx.Add(h, h) }},
		{"Silu4864", func() *mlx.Array { return mlx.Silu(f) }},
		{"Mul4864", func() *mlx.Array { return mlx.Mul(f, f) }},
		{"SDPA256", func() *mlx.Array { return mlx.ScaledDotProductAttention(q, k, v, 0.125, mlx.CausalMask()) }},
		{"RoPE", func() *mlx.Array { return mlx.RoPE(q, mlx.RoPEParams{Dims: 64, Base: 10000, Offset: 100}) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f().Free()
			}
		})
	}
}
