package cpu

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkDecodeKernelsKV: the f32 decode kernel and the 8/4-bit fused
// kernels (with int8 scores where the CPU has VNNI, and q8f/q4f: their
// float32 scores) on one kv head (7 query heads of 64) over 4,096 positions, with
// 24 distinct caches per variant (a 0.5B model's layers) so that the f32
// cache is not all in L2; variants alternate in one run. Per layer: the
// mean time (_us/layer) and the best sweep's (_best_us/layer), which other
// load on a shared machine inflates least.
func BenchmarkDecodeKernelsKV(b *testing.B) {
	const n, rep, d, g, layers = 4096, 7, 64, 64, 24
	r := rand.New(rand.NewPCG(5, 6))
	q := randF32(r, rep*d)
	type qc struct {
		kp, vp         []uint32
		ks, kb, vs, vb []float32
	}
	mk := func(bits int) qc {
		w := n * d * bits / 32
		c := qc{kp: make([]uint32, w), vp: make([]uint32, w)}
		for i := range c.kp {
			c.kp[i], c.vp[i] = r.Uint32(), r.Uint32()
		}
		c.ks, c.kb, c.vs, c.vb = randF32(r, n*d/g), randF32(r, n*d/g), randF32(r, n*d/g), randF32(r, n*d/g)
		for i := range c.ks {
			c.ks[i] *= 0.01
			c.vs[i] *= 0.01
		}
		return c
	}
	var fk, fv [layers][]float32
	var q8, q4 [layers]qc
	for l := range layers {
		fk[l], fv[l] = randF32(r, n*d), randF32(r, n*d)
		q8[l], q4[l] = mk(8), mk(4)
	}
	s := make([]float32, rep*n+qScratch(rep, d, g))
	vnni, was := qVNNIOK, qVNNI
	o := make([]float32, rep*d)
	names := []string{"f32", "q8", "q4", "q8f", "q4f"}
	var spent, best [5]time.Duration
	b.ResetTimer()
	for range b.N {
		for vi := range names {
			qVNNI = vnni && vi < 3
			start := time.Now()
			for l := range layers {
				switch vi {
				case 0:
					attnDecode(q, rep, fk[l], fv[l], n, d, d, d, d, 0.125, s, o)
				case 1, 3:
					c := q8[l]
					qDecodeHead(q, rep, d, d, n, g, 8, 0.125, c.kp, c.ks, c.kb, c.vp, c.vs, c.vb, s, o)
				case 2, 4:
					c := q4[l]
					qDecodeHead(q, rep, d, d, n, g, 4, 0.125, c.kp, c.ks, c.kb, c.vp, c.vs, c.vb, s, o)
				}
			}
			t := time.Since(start)
			spent[vi] += t
			if best[vi] == 0 || t < best[vi] {
				best[vi] = t
			}
		}
	}
	qVNNI = was
	for i, name := range names {
		b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N)/layers, name+"_us/layer")
		b.ReportMetric(float64(best[i].Microseconds())/layers, name+"_best_us/layer")
	}
}
