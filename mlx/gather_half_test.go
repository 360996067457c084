package mlx_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

// 16-bit experts with float32 activations (bf16 and f16 checkpoints): the
// result is float32 and equals the float64 product with the 16-bit values,
// on the backend's gather-matmul and on the composed one.
func TestGatherMMHalfExperts(t *testing.T) {
	leakFree(t)
	check := func(t *testing.T, rng *rand.Rand) {
		for _, c := range gatherCases() {
			for _, dt := range []mlx.DType{mlx.BFloat16, mlx.Float16} {
				for _, transB := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s-%v-T%v", c.name, dt, transB), func(t *testing.T) {
						checkGatherMMHalf(t, rng, c, dt, transB)
					})
				}
			}
		}
	}
	check(t, newRNG(154))
	prev := mlx.DefaultBackend()
	if _, ok := prev.(mlx.GatherMatmuler); !ok {
		return // the composed path already ran
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
	t.Run("composed", func(t *testing.T) { check(t, newRNG(155)) })
}

func checkGatherMMHalf(t *testing.T, rng *rand.Rand, c gatherCase, dt mlx.DType, transB bool) {
	nA, nE := size(c.aBatch), size(c.bBatch)
	ad := randSlice(rng, nA*c.m*c.k, -1, 1)
	bits := make([]uint16, nE*c.k*c.n)
	bd := make([]float64, len(bits))
	for i := range bits {
		v := float32(rng.Float64()*2 - 1)
		if dt == mlx.BFloat16 {
			bits[i] = mlx.F32ToBF16(v)
			bd[i] = float64(mlx.BF16ToF32(bits[i]))
		} else {
			bits[i] = mlx.F32ToF16(v)
			bd[i] = float64(mlx.F16ToF32(bits[i]))
		}
	}
	a := mlx.FromSlice(ad, append(append([]int(nil), c.aBatch...), c.m, c.k)...)
	bshape := append(append([]int(nil), c.bBatch...), c.k, c.n)
	op := mlx.GatherMM
	if transB {
		bshape = append(append([]int(nil), c.bBatch...), c.n, c.k)
		op = mlx.GatherMMT
	}
	b := mlx.FromBits(bits, dt, bshape...)
	lhs, rhs := indexArray(c.lhs, c.lShape), indexArray(c.rhs, c.rShape)
	defer mlx.Free(a, b, lhs, rhs)
	got := op(a, b, lhs, rhs, false)
	defer got.Free()
	if got.DType() != mlx.Float32 {
		t.Fatalf("float32 x %v gave %v, want float32", dt, got.DType())
	}
	_, li, ri := c.flatIndices()
	closeTo(t, "GatherMM half", got.Float32s(), refGather(ad, bd, li, ri, c.m, c.k, c.n, transB), 1e-5, 1e-5)
}
