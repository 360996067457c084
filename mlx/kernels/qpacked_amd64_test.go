//go:build cgo && amd64

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func needPacked(t *testing.T) {
	t.Helper()
	if !PackedQ4Supported(128, 64) {
		t.Skipf("the CPU lacks AVX-512 VNNI, VL or GFNI (%s); the packed 4-bit kernel does not run here", Features())
	}
}

func TestPackedQ4TileBytesMatchC(t *testing.T) {
	needPacked(t)
	for _, sh := range packedShapes {
		if got, want := pq4TileBytes(sh[1], sh[2]), pq4TileBytesC(sh[1], sh[2]); got != want {
			t.Errorf("%v: Go tile %d bytes, C %d", sh, got, want)
		}
	}
}

// TestPackedQ4Dequantize: rows expand bit for bit as Dequantize expands
// the MLX layout, whole or from any starting row.
func TestPackedQ4Dequantize(t *testing.T) {
	needPacked(t)
	r := rand.New(rand.NewPCG(33, 34))
	for _, sh := range packedShapes {
		rows, cols, gs := sh[0], sh[1], sh[2]
		w, s, b, p := packedFixture(t, r, rows, cols, gs)
		want := make([]float32, rows*cols)
		if err := Dequantize(w, s, b, rows, cols, gs, 4, want); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, rows*cols)
		if err := PackedQ4Dequantize(p, 0, rows, got); err != nil {
			t.Fatal(err)
		}
		if !bitsEqualF(got, want) {
			t.Errorf("%v: dequantized rows differ from Dequantize", sh)
		}
		r0 := rows / 2
		part := make([]float32, (rows-r0)*cols)
		if err := PackedQ4Dequantize(p, r0, rows, part); err != nil {
			t.Fatal(err)
		}
		if !bitsEqualF(part, want[r0*cols:]) {
			t.Errorf("%v: rows from %d differ", sh, r0)
		}
	}
}

// TestPackedQ4MatchesReference holds the packed kernel to the float64
// tolerance of every quantized kernel, for each way it pairs rows of x,
// the dequantizing path of large batches, and wide-range x.
func TestPackedQ4MatchesReference(t *testing.T) {
	withoutPQ8(t) // the exact-x kernels, to float32 rounding; TestPackedQ8Rows holds the int8 one
	withoutAMX(t) // the float32 paths, to their bound
	needPacked(t)
	r := rand.New(rand.NewPCG(35, 36))
	for _, sh := range packedShapes {
		n, k, gs := sh[0], sh[1], sh[2]
		w, s, b, p := packedFixture(t, r, n, k, gs)
		for _, m := range []int{1, 2, 3, 5, qmmDequantMinM + 1} {
			for xi, x := range [][]float32{randSlice(r, m*k), wideX(r, m*k)} {
				want, mag := refQMatmul(x, m, k, n, w, s, b, gs, 4, true)
				out := make([]float32, m*n)
				if err := PackedQ4Matmul(x, m, p, out); err != nil {
					t.Fatal(err)
				}
				assertClose(t, fmt.Sprintf("%v_m%d_x%d", sh, m, xi), out, want, mag, 1e-5)
			}
		}
	}
}

// TestPackedQ4Parallel: a matrix large enough to be split over the worker
// goroutines gives the same results as computing it on one.
func TestPackedQ4Parallel(t *testing.T) {
	withoutPQ8(t) // the exact-x kernels, to float32 rounding; TestPackedQ8Rows holds the int8 one
	needPacked(t)
	r := rand.New(rand.NewPCG(37, 38))
	const n, k, gs = 4099, 896, 64
	_, _, _, p := packedFixture(t, r, n, k, gs)
	x := randSlice(r, k)
	got := make([]float32, n)
	if err := PackedQ4Matmul(x, 1, p, got); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, n)
	for t0 := 0; t0 < n; t0 += 4 {
		one := PackedQ4{Data: p.Data[t0/4*pq4TileBytes(k, gs) : (t0/4+1)*pq4TileBytes(k, gs)], Rows: min(4, n-t0), Cols: k, GroupSize: gs}
		if err := PackedQ4Matmul(x, 1, one, want[t0:]); err != nil {
			t.Fatal(err)
		}
	}
	if !bitsEqualF(got, want) {
		t.Error("split matmul differs from tile-by-tile results")
	}
}

// TestPackedQ4NonFinite: an x the integer kernel cannot hold goes through
// the dequantized tiles, and infinities and NaNs land where a float
// product puts them.
func TestPackedQ4NonFinite(t *testing.T) {
	withoutPQ8(t) // the exact-x kernels, to float32 rounding; TestPackedQ8Rows holds the int8 one
	needPacked(t)
	r := rand.New(rand.NewPCG(39, 40))
	const m, k, n, gs = 2, 256, 70, 64
	w, s, b, p := packedFixture(t, r, n, k, gs)
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		x := randSlice(r, m*k)
		x[k+77] = bad
		got := make([]float32, m*n)
		if err := PackedQ4Matmul(x, m, p, got); err != nil {
			t.Fatal(err)
		}
		want, mag := refQMatmul(x[:k], 1, k, n, w, s, b, gs, 4, true)
		assertClose(t, fmt.Sprintf("finite row beside %v", bad), got[:n], want, mag, 1e-5)
		for j, v := range got[n:] {
			if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				t.Fatalf("row with %v: out[%d] = %v is finite", bad, j, v)
			}
		}
	}
}
