package mlx_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// refGather is out[i] = a[lhs[i]] @ op(b[rhs[i]]) in float64, with a
// [A, M, K] and b [E, K, N] ([E, N, K] when transB) as host slices.
func refGather(a []float32, b []float64, lhs, rhs []int, m, k, n int, transB bool) []float64 {
	out := make([]float64, len(lhs)*m*n)
	for i := range lhs {
		for r := 0; r < m; r++ {
			for c := 0; c < n; c++ {
				s := 0.0
				for p := 0; p < k; p++ {
					bv := b[rhs[i]*k*n+p*n+c]
					if transB {
						bv = b[rhs[i]*k*n+c*k+p]
					}
					s += float64(a[lhs[i]*m*k+r*k+p]) * bv
				}
				out[i*m*n+r*n+c] = s
			}
		}
	}
	return out
}

// gatherCase is one gather-matmul: operand batch shapes, index arrays (nil:
// arange) and the flat lhs/rhs the output batch works out to.
type gatherCase struct {
	name           string
	aBatch, bBatch []int
	m, k, n        int
	lhs, rhs       []int // index data, nil for none
	lShape, rShape []int
}

func gatherCases() []gatherCase {
	sortedRHS := []int{0, 0, 2, 2, 2, 5, 7, 7}
	big := make([]int, 24) // one expert for many rows: the blocked path
	for i := range big {
		big[i] = 3 + i/20
	}
	return []gatherCase{
		// mlx-lm's sorted form: one row per (token, slot), grouped by expert.
		{name: "sorted", aBatch: []int{8}, bBatch: []int{8}, m: 1, k: 16, n: 12, rhs: sortedRHS, rShape: []int{8}},
		// unsorted: tokens [T, 1] broadcast against their top-k [T, k].
		{name: "topk", aBatch: []int{3, 1}, bBatch: []int{8}, m: 1, k: 16, n: 12, rhs: []int{5, 1, 1, 6, 0, 5}, rShape: []int{3, 2}},
		// explicit lhs with repeats, M > 1, a 2-D batch of right operands.
		{name: "lhs-repeats", aBatch: []int{4}, bBatch: []int{2, 3}, m: 3, k: 8, n: 5, lhs: []int{3, 0, 3, 1}, lShape: []int{4}, rhs: []int{4, 4, 0, 5}, rShape: []int{4}},
		{name: "large-run", aBatch: []int{24}, bBatch: []int{5}, m: 1, k: 64, n: 48, rhs: big, rShape: []int{24}},
	}
}

// flatIndices is the broadcast of the case's indices to its output batch.
func (c gatherCase) flatIndices() (batch []int, lhs, rhs []int) {
	l, ls := c.lhs, c.lShape
	if l == nil {
		ls = c.aBatch
		l = make([]int, size(ls))
		for i := range l {
			l[i] = i
		}
	}
	r, rs := c.rhs, c.rShape
	if r == nil {
		rs = c.bBatch
		r = make([]int, size(rs))
		for i := range r {
			r[i] = i
		}
	}
	batch, err := mlx.BroadcastShapes(ls, rs)
	if err != nil {
		panic(err)
	}
	for o := 0; o < size(batch); o++ {
		idx := unravel(o, batch)
		lhs = append(lhs, l[bcFlat(idx, ls)])
		rhs = append(rhs, r[bcFlat(idx, rs)])
	}
	return batch, lhs, rhs
}

func indexArray(data []int, shape []int) *mlx.Array {
	if data == nil {
		return nil
	}
	return mlx.FromSlice(data, shape...)
}

// GatherMM and GatherMMT equal the float64 product of the selected
// matrices, for every index form MoE layers use.
func TestGatherMMMatchesReference(t *testing.T) {
	leakFree(t)
	rng := newRNG(151)
	for _, c := range gatherCases() {
		for _, transB := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-T%v", c.name, transB), func(t *testing.T) {
				checkGatherMM(t, rng, c, transB)
			})
		}
	}
}

func checkGatherMM(t *testing.T, rng *rand.Rand, c gatherCase, transB bool) {
	nA, nE := size(c.aBatch), size(c.bBatch)
	ad := randSlice(rng, nA*c.m*c.k, -1, 1)
	bd := randSlice(rng, nE*c.k*c.n, -1, 1)
	a := mlx.FromSlice(ad, append(append([]int(nil), c.aBatch...), c.m, c.k)...)
	bshape := append(append([]int(nil), c.bBatch...), c.k, c.n)
	if transB {
		bshape = append(append([]int(nil), c.bBatch...), c.n, c.k)
	}
	b := mlx.FromSlice(bd, bshape...)
	lhs, rhs := indexArray(c.lhs, c.lShape), indexArray(c.rhs, c.rShape)
	defer mlx.Free(a, b, lhs, rhs)
	op := mlx.GatherMM
	if transB {
		op = mlx.GatherMMT
	}
	got := op(a, b, lhs, rhs, c.name == "sorted")
	defer got.Free()
	batch, li, ri := c.flatIndices()
	shapeEq(t, "GatherMM", got, append(append([]int(nil), batch...), c.m, c.n)...)
	closeTo(t, "GatherMM", got.Float32s(), refGather(ad, f64s(bd), li, ri, c.m, c.k, c.n, transB), 1e-5, 1e-5)
}

// GatherQMM equals the float64 product with the dequantized experts, the
// dequantization done here from MLX's documented format.
func TestGatherQMMMatchesReference(t *testing.T) {
	leakFree(t)
	rng := newRNG(152)
	for _, c := range gatherCases() {
		for _, f := range []struct{ bits, gs int }{{4, 32}, {3, 32}, {8, 64}} {
			for _, transpose := range []bool{true, false} {
				c := c
				c.k, c.n = 64, 64 // both sides hold whole groups
				t.Run(fmt.Sprintf("%s-b%d-g%d-T%v", c.name, f.bits, f.gs, transpose), func(t *testing.T) {
					checkGatherQMM(t, rng, c, f.bits, f.gs, transpose)
				})
			}
		}
	}
}

func checkGatherQMM(t *testing.T, rng *rand.Rand, c gatherCase, bits, gs int, transpose bool) {
	nA, nE := size(c.aBatch), size(c.bBatch)
	rows, cols := c.n, c.k // the stored matrix: [N, K] transposed, else [K, N]
	if !transpose {
		rows, cols = c.k, c.n
	}
	codes := make([]uint32, nE*rows*cols)
	for i := range codes {
		codes[i] = uint32(rng.IntN(1 << bits))
	}
	scales := randSlice(rng, nE*rows*cols/gs, 0.01, 0.1)
	biases := randSlice(rng, nE*rows*cols/gs, -0.3, 0.3)
	wq := refPack(codes, bits)
	w := refDequant(codes, scales, biases, nE*rows, cols, gs)
	xd := randSlice(rng, nA*c.m*c.k, -1, 1)
	x := mlx.FromSlice(xd, append(append([]int(nil), c.aBatch...), c.m, c.k)...)
	pw := mlx.FromSlice(wq, append(append([]int(nil), c.bBatch...), rows, cols*bits/32)...)
	ps := mlx.FromSlice(scales, append(append([]int(nil), c.bBatch...), rows, cols/gs)...)
	pb := mlx.FromSlice(biases, append(append([]int(nil), c.bBatch...), rows, cols/gs)...)
	lhs, rhs := indexArray(c.lhs, c.lShape), indexArray(c.rhs, c.rShape)
	defer mlx.Free(x, pw, ps, pb, lhs, rhs)
	got := mlx.GatherQMM(x, pw, ps, pb, lhs, rhs, transpose, gs, bits, false)
	defer got.Free()
	batch, li, ri := c.flatIndices()
	shapeEq(t, "GatherQMM", got, append(append([]int(nil), batch...), c.m, c.n)...)
	closeTo(t, "GatherQMM", got.Float32s(), refGather(xd, w, li, ri, c.m, c.k, c.n, transpose), 1e-4, 1e-4)
}

// Bad arguments panic naming the op, as MLX raises.
func TestGatherMMRejectsBadInput(t *testing.T) {
	leakFree(t)
	a := mlx.Zeros([]int{2, 1, 4}, mlx.Float32)
	b := mlx.Zeros([]int{3, 4, 5}, mlx.Float32)
	fi := mlx.Zeros([]int{2}, mlx.Float32)
	ri := mlx.FromSlice([]int{0, 1, 2}, 3)
	defer mlx.Free(a, b, fi, ri)
	for name, f := range map[string]func() *mlx.Array{
		"float indices":     func() *mlx.Array { return mlx.GatherMM(a, b, nil, fi, false) },
		"inner dimension":   func() *mlx.Array { return mlx.GatherMMT(a, b, nil, nil, false) },
		"index broadcast":   func() *mlx.Array { return mlx.GatherMM(a, b, nil, ri, false) },
		"quantized x width": func() *mlx.Array { return mlx.GatherQMM(a, b, b, b, nil, nil, true, 32, 4, false) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", name)
				} else if s := fmt.Sprint(r); !contains(s, "mlx.Gather") {
					t.Errorf("%s: panic %q does not name the op", name, s)
				}
			}()
			f().Free()
		}()
	}
}

// plainBackend is the current backend without its optional fast paths, so
// that the composed gather-matmul (what a backend without GatherMatmuler
// gets) is tested too.
type plainBackend struct{ mlx.Backend }

// The composed fallback computes what the backend's own gather-matmul
// does, on every case.
func TestGatherComposedFallback(t *testing.T) {
	leakFree(t)
	prev := mlx.DefaultBackend()
	if _, ok := prev.(mlx.GatherMatmuler); !ok {
		t.Skipf("backend %s has no GatherMatmuler: the other tests already ran the composed path", prev.Name())
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
	if _, ok := mlx.DefaultBackend().(mlx.GatherMatmuler); ok {
		t.Fatal("the plain backend still has the fast path")
	}
	rng := newRNG(153)
	for _, c := range gatherCases() {
		t.Run(c.name, func(t *testing.T) {
			checkGatherMM(t, rng, c, true)
			checkGatherMM(t, rng, c, false)
			c.k, c.n = 64, 64
			checkGatherQMM(t, rng, c, 4, 32, true)
			checkGatherQMM(t, rng, c, 4, 64, false)
		})
	}
}
