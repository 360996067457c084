//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func needDPBF16(t *testing.T) {
	t.Helper()
	if !haveDPBF16 {
		t.Skip("no AVX-512 BF16 here: the VDPBF16PS GEMM does not run")
	}
}

// dpShapes have tails in every dimension: m not a multiple of the
// 12-row panel (one row past one, eleven rows short), n under one 32-column
// panel, not a multiple of it, or under 16 in the last panel; k odd (a pair
// split by the end of a row), not a multiple of the 32-value step, and over
// several 256-value k blocks.
var dpShapes = [][3]int{{12, 32, 32}, {13, 64, 40}, {45, 37, 7}, {64, 1100, 96}, {97, 129, 70}, {40, 1536, 33}, {25, 600, 48}}

// TestDPBF16Gemm holds the VDPBF16PS GEMM to the float64 product of x and
// W within amxTol (x rounded to bf16: 2^-8 of Σ|x·w|, plus float32 sums),
// on an output that starts as NaN, so every element must be written.
func TestDPBF16Gemm(t *testing.T) {
	needDPBF16(t)
	r := rand.New(rand.NewPCG(19, 30))
	for _, sh := range dpShapes {
		m, k, n := sh[0], sh[1], sh[2]
		w := randHalf(r, n*k, BF16)
		x := randSlice(r, m*k)
		out := nanOut(m * n)
		dpbf16GemmT(x, m, k, n, w, out)
		want, mag := refHMatmul(x, m, k, n, w, BF16, true)
		assertClose(t, fmt.Sprintf("m%d_k%d_n%d", m, k, n), out, want, mag, amxTol(k, false))
	}
}

// TestDPBF16Exact: with x already bf16 and small integers in W, every
// product and partial sum is exact in float32, so the result must equal
// the float64 product exactly: a lost k block, a swapped pair or a
// misplaced panel changes it, however small the error budget elsewhere.
func TestDPBF16Exact(t *testing.T) {
	needDPBF16(t)
	r := rand.New(rand.NewPCG(19, 31))
	for _, sh := range dpShapes {
		m, k, n := sh[0], sh[1], sh[2]
		w := make([]uint16, n*k)
		for i := range w {
			w[i] = uint16(math.Float32bits(float32(r.IntN(15)-7)) >> 16)
		}
		x := make([]float32, m*k)
		for i := range x {
			x[i] = float32(r.IntN(31) - 15)
		}
		out := nanOut(m * n)
		dpbf16GemmT(x, m, k, n, w, out)
		want, _ := refHMatmul(x, m, k, n, w, BF16, true)
		for i := range want {
			if float64(out[i]) != want[i] {
				t.Fatalf("m%d_k%d_n%d: out[%d] = %v, want %v exactly", m, k, n, i, out[i], want[i])
			}
		}
	}
}

// TestDPBF16EntryPoint checks that HMatmul takes the VDPBF16PS path for
// bf16 x @ Wᵀ from amxMinM rows and amxMinK columns (its result equals
// dpbf16GemmT's bit for bit) and not below either, nor with
// HARK_BF16DOT=0, nor for f16 weights (those stay within the float32
// bound).
func TestDPBF16EntryPoint(t *testing.T) {
	needDPBF16(t)
	was := haveAMX
	haveAMX = false // the AMX path would come first
	t.Cleanup(func() { haveAMX = was })
	r := rand.New(rand.NewPCG(19, 32))
	const n = 40
	for _, c := range []struct {
		m, k int
		env  string
		via  bool
	}{
		{amxMinM - 1, amxMinK, "", false},
		{amxMinM, amxMinK, "", true},
		{hmmGemmMinM + 3, amxMinK + 128, "", true},
		{hmmGemmMinM + 3, amxMinK + 128, "0", false},
		{hmmGemmMinM + 3, amxMinK - 128, "", false},
	} {
		m, k := c.m, c.k
		t.Setenv("HARK_BF16DOT", c.env)
		wh, wf := randHalf(r, n*k, BF16), randHalf(r, n*k, F16)
		x := randSlice(r, m*k)
		out, ref := make([]float32, m*n), make([]float32, m*n)
		if err := HMatmul(x, m, k, n, wh, BF16, true, out); err != nil {
			t.Fatal(err)
		}
		dpbf16GemmT(x, m, k, n, wh, ref)
		same := true
		for i := range out {
			same = same && math.Float32bits(out[i]) == math.Float32bits(ref[i])
		}
		if same != c.via {
			t.Errorf("m=%d k=%d HARK_BF16DOT=%q: HMatmul equals the VDPBF16PS GEMM: %v, want %v", m, k, c.env, same, c.via)
		}
		if err := HMatmul(x, m, k, n, wf, F16, true, out); err != nil {
			t.Fatal(err)
		}
		want, mag := refHMatmul(x, m, k, n, wf, F16, true)
		assertClose(t, fmt.Sprintf("HMatmul f16 m=%d", m), out, want, mag, float64(k+2)*0x1p-24)
	}
}
