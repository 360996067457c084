package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// quantSide quantizes random [b, h, capacity, d] rows as a cache stores them.
func quantSide(t testing.TB, r *rand.Rand, b, h, capacity, d, g, bits int) mlx.QuantizedKV {
	x := mlx.FromSlice(randF32(r, b*h*capacity*d), b, h, capacity, d)
	defer x.Free()
	p, s, bi, err := mlx.Quantize(x, g, bits)
	if err != nil {
		t.Fatal(err)
	}
	return mlx.QuantizedKV{Packed: p, Scales: s, Biases: bi}
}

// dequant64 is the independent reference: row j of head (bi, h) in float64,
// the codes unpacked here low bits first as MLX packs them.
func dequant64(s mlx.QuantizedKV, bi, h, j, g, bits int) []float64 {
	dims := s.Packed.Dims()
	hs, capacity, words := dims[1], dims[2], dims[3]
	d := words * 32 / bits
	codes := s.Packed.Uint32s()
	sc, bs := s.Scales.Float32s(), s.Biases.Float32s()
	row := ((bi*hs+h)*capacity + j)
	out := make([]float64, d)
	per := 32 / bits
	for i := range d {
		c := codes[row*words+i/per] >> (uint(i%per) * uint(bits)) & (1<<bits - 1)
		gi := row*(d/g) + i/g
		out[i] = float64(sc[gi])*float64(c) + float64(bs[gi])
	}
	return out
}

// TestQuantizedDecodeAttention: the fused op agrees with the composed one
// (two quantized matmuls and a softmax) within float32 rounding, and both
// with float64 attention over codes dequantized independently, for every
// bits and group the KV cache offers, odd lengths shorter than the
// storage, GQA sharing and batches; with the widest loops the CPU has
// (int8 scores where it has VNNI), with AVX-512 in float and with the
// portable loops. Where the widest loops take q as int8 (qDot), the
// fused op's tolerance adds what that rounding can move the output by.
func TestQuantizedDecodeAttention(t *testing.T) {
	for _, m := range []struct{ wide, vnni bool }{{true, true}, {true, false}, {false, false}} {
		t.Run(fmt.Sprintf("wide=%v_vnni=%v", m.wide, m.vnni), func(t *testing.T) {
			defer func(w, v bool) { qWide, qVNNI = w, v }(qWide, qVNNI)
			qWide, qVNNI = m.wide, qVNNIOK && m.vnni
			testQuantizedDecodeAttention(t)
		})
	}
}

func testQuantizedDecodeAttention(t *testing.T) {
	if _, ok := any(cpuBackend{}).(mlx.QuantizedDecodeAttender); !ok {
		t.Fatal("the cpu backend has no fused QuantizedDecodeAttention")
	}
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(7, 9))
	type tc struct{ b, hq, hkv, d, n, capacity, g, bits int }
	var cases []tc
	for _, bits := range []int{4, 8} {
		for _, g := range []int{32, 64, 128} {
			cases = append(cases,
				tc{1, 14, 2, 128, 333, 512, g, bits},
				tc{2, 3, 1, 128, 1, 8, g, bits},
				tc{2, 4, 4, 128, 37, 40, g, bits})
		}
		cases = append(cases, tc{1, 6, 2, 64, 129, 256, 64, bits}, tc{1, 8, 2, 96, 17, 17, 32, bits})
	}
	for _, c := range cases {
		name := fmt.Sprintf("b%d_hq%d_kv%d_d%d_n%d_g%d_q%d", c.b, c.hq, c.hkv, c.d, c.n, c.g, c.bits)
		k := quantSide(t, r, c.b, c.hkv, c.capacity, c.d, c.g, c.bits)
		v := quantSide(t, r, c.b, c.hkv, c.capacity, c.d, c.g, c.bits)
		q := mlx.FromSlice(randF32(r, c.b*c.hq*c.d), c.b, c.hq, 1, c.d)
		scale := float32(1 / math.Sqrt(float64(c.d)))
		p := mlx.QuantizedDecodeParams{N: c.n, Scale: scale, Group: c.g, Bits: c.bits}
		got := mlx.QuantizedDecodeAttention(q, k, v, p)
		want := mlx.QuantizedDecodeAttentionComposed(q, k, v, p)
		if !equalInts(got.Dims(), []int{c.b, c.hq, 1, c.d}) {
			t.Fatalf("%s: shape %v", name, got.Dims())
		}
		gf, wf, qf := got.Float32s(), want.Float32s(), q.Float32s()
		rep := c.hq / c.hkv
		for bi := range c.b {
			for h := range c.hq {
				kh := h / rep
				s := make([]float64, c.n)
				m := math.Inf(-1)
				for j := range c.n {
					kr := dequant64(k, bi, kh, j, c.g, c.bits)
					for i, x := range kr {
						s[j] += float64(qf[(bi*c.hq+h)*c.d+i]) * x
					}
					s[j] *= float64(scale)
					m = max(m, s[j])
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - m)
					sum += s[j]
				}
				ref, vrows := make([]float64, c.d), make([][]float64, c.n)
				for j := range c.n {
					vrows[j] = dequant64(v, bi, kh, j, c.g, c.bits)
					for i, x := range vrows[j] {
						ref[i] += s[j] / sum * x
					}
				}
				// With int8 q (qDot) every score is off by at most its
				// bound e (int8Scores); with E the largest, each weight
				// p_j moves by at most p_j·(exp(2E)-1), and as the weights
				// still sum to 1, out[i] by at most
				// (exp(2E)-1)·Σ_j p_j·|v_j[i] - out[i]|.
				var spread float64
				if qDot(c.d) {
					qh := make([]float64, c.d)
					for i := range qh {
						qh[i] = float64(qf[(bi*c.hq+h)*c.d+i])
					}
					for j := range c.n {
						codes, ks, kb := keyCodes(k, bi, kh, j, c.g, c.bits)
						_, _, e := int8Scores(qh, codes, ks, kb, c.g, c.bits, 127, float64(scale))
						spread = max(spread, e)
					}
					spread = math.Expm1(2 * spread)
				}
				// With int16 weights (qDotValues) out[i] is off by at most
				// Σ_j (step/2)·|c_j[i] - mid| with step a 32767th of the
				// largest p_j·s_j of its block and group: at most the
				// largest over all keys, taken from the reference p and
				// widened by the scores' effect on p.
				var vdev []float64
				if qDotValues(c.d, c.g, c.bits) {
					vdev = make([]float64, c.d)
					amax := make([]float64, c.d/c.g)
					for j := range c.n {
						_, vsc, _ := keyCodes(v, bi, kh, j, c.g, c.bits)
						for gg, x := range vsc {
							amax[gg] = max(amax[gg], s[j]/sum*math.Abs(x)*(1+spread))
						}
					}
					for j := range c.n {
						codes, _, _ := keyCodes(v, bi, kh, j, c.g, c.bits)
						for i, cv := range codes {
							vdev[i] += amax[i/c.g] / 65534 * math.Abs(float64(cv-1<<(c.bits-1)))
						}
					}
				}
				for i, x := range ref {
					at := (bi*c.hq+h)*c.d + i
					var dev float64
					for j := range c.n {
						dev += s[j] / sum * math.Abs(vrows[j][i]-x)
					}
					tol := 2e-5*(1+math.Abs(x)) + spread*dev
					if vdev != nil {
						tol += vdev[i]
					}
					if d := math.Abs(float64(gf[at]) - x); !(d <= tol) {
						t.Fatalf("%s: fused out[%d] = %v, float64 %v", name, at, gf[at], x)
					}
					if d := math.Abs(float64(wf[at]) - x); !(d <= 2e-5*(1+math.Abs(x))) {
						t.Fatalf("%s: composed out[%d] = %v, float64 %v", name, at, wf[at], x)
					}
				}
			}
		}
		mlx.Free(got, want, q, k.Packed, k.Scales, k.Biases, v.Packed, v.Scales, v.Biases)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestQuantizedDecodeSplit: with the positions cut into ranges across
// threads (qDecodeSplit), the fused op agrees within float32 rounding with
// one pass over each kv head (qDecodeHead), for ranges with short tails,
// batches, 4 and 8 bits and values of another width; a score that is not
// finite sends its kv head down the unsplit path, bit for bit.
func TestQuantizedDecodeSplit(t *testing.T) {
	if !q512(64) {
		t.Skip("the ranges are split only for the AVX-512 loops")
	}
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(23, 4))
	type tc struct{ b, hq, hkv, d, dv, n, capacity, g, bits, parts int }
	for _, c := range []tc{
		{1, 14, 2, 64, 64, 2100, 2176, 64, 8, 4},
		{1, 14, 2, 64, 64, 4096, 4096, 64, 4, 4},
		{2, 4, 1, 128, 64, 1100, 1200, 32, 8, 3},
		{1, 7, 1, 64, 128, 700, 700, 64, 4, 6},
	} {
		for _, inf := range []bool{false, true} {
			name := fmt.Sprintf("%v_inf%v", c, inf)
			k := quantSide(t, r, c.b, c.hkv, c.capacity, c.d, c.g, c.bits)
			v := quantSide(t, r, c.b, c.hkv, c.capacity, c.dv, c.g, c.bits)
			qv := randF32(r, c.b*c.hq*c.d)
			for i := range qv {
				qv[i] *= 4 // peaked softmax: ranges with very different sums
			}
			if inf {
				qv[(c.b*c.hq-1)*c.d] = float32(math.Inf(1))
			}
			q := mlx.FromSlice(qv, c.b, c.hq, 1, c.d)
			p := mlx.QuantizedDecodeParams{N: c.n, Scale: float32(1 / math.Sqrt(float64(c.d))), Group: c.g, Bits: c.bits}
			got := make([]float32, c.b*c.hq*c.dv)
			qDecodeSplit(qv, k, v, p, decodeShape{c.b, c.hq, c.hkv, c.d, c.capacity, c.n}, c.dv, c.parts, got)
			rep, heads := c.hq/c.hkv, c.b*c.hkv
			kd := func(s mlx.QuantizedKV) ([]uint32, []float32, []float32) {
				return s.Packed.Uint32s(), s.Scales.Float32s(), s.Biases.Float32s()
			}
			kp, ks, kb := kd(k)
			vp, vs, vb := kd(v)
			kw, vw, kg, vg := c.d*c.bits/32, c.dv*c.bits/32, c.d/c.g, c.dv/c.g
			s := make([]float32, rep*c.n+qScratch(rep, max(c.d, c.dv), c.g))
			want := make([]float32, rep*c.dv)
			for gi := range heads {
				r0, at := (gi/c.hkv)*c.hq+(gi%c.hkv)*rep, gi*c.capacity
				qDecodeHead(qv[r0*c.d:(r0+rep)*c.d], rep, c.d, c.dv, c.n, c.g, c.bits, p.Scale,
					kp[at*kw:(at+c.n)*kw], ks[at*kg:(at+c.n)*kg], kb[at*kg:(at+c.n)*kg],
					vp[at*vw:(at+c.n)*vw], vs[at*vg:(at+c.n)*vg], vb[at*vg:(at+c.n)*vg], s, want)
				for i, w := range want {
					x := got[r0*c.dv+i]
					if inf && gi == heads-1 {
						if math.Float32bits(x) != math.Float32bits(w) {
							t.Fatalf("%s: kv head %d [%d] = %v, unsplit %v", name, gi, i, x, w)
						}
						continue
					}
					if d := math.Abs(float64(x - w)); !(d <= 2e-5*(1+math.Abs(float64(w)))) {
						t.Fatalf("%s: kv head %d [%d] = %v, unsplit %v", name, gi, i, x, w)
					}
				}
			}
			mlx.Free(q, k.Packed, k.Scales, k.Biases, v.Packed, v.Scales, v.Biases)
		}
	}
}
