package kernels

import (
	"fmt"
	"sync/atomic"
)

// The packed 4-bit layout is what a decode step streams fastest on CPUs
// with AVX-512 VNNI and GFNI (qpacked_amd64.c says why). It holds exactly
// the bytes of an MLX 4-bit matrix [rows, cols], reordered:
//
//   - Rows come in tiles of 4 (the last tile is padded with zero rows).
//   - A tile is a sequence of superblocks, each covering two groups of
//     every row (2*groupSize values; the last one may cover one group):
//     first groupSize/64 code blocks (one per 128 values, and only one
//     for a final single group of 128) of 4 × 64 bytes, row after row,
//     the bytes of MLX's packed words; then 64 bytes of meta, 8 scales
//     and then 8 biases as little-endian float32, [row][group].
//
// So a tile is one contiguous run read front to back, and a kernel that
// takes 4 rows at a time reads a single stream per core.

// PackedQ4TileRows is the number of rows in a tile of the packed layout:
// matrices of whole tiles pack side by side as their concatenation.
const PackedQ4TileRows = pq4TileRows

// PackedInt8MinRows is the fewest rows of x that take the int8 kernel
// with x quantized per group (qpacked_q8_amd64.c) where it is on: prompt
// chunks. It sits above every row count the decode family runs, so
// batched decode (engine.MaxBatchRows, 16 rows) and a speculative verify
// pass (1 + engine.MaxDraftTokens, 65 rows) keep the exact-x kernels and
// give each row bit for bit what single-row decode gives it; a test in
// engine holds the three constants in that order. Below it the int8
// kernel was faster too (BenchmarkPackedQ8: about 2x from 16 rows), but
// its rounding of x would make a greedy verify pass disagree with plain
// decode.
const PackedInt8MinRows = 80

// pq8Force overrides the int8 kernel's default: 0 keeps it (pq8OK), 1
// turns it off, 2 on where the CPU has it (SetPackedInt8).
var pq8Force atomic.Int32

// SetPackedInt8 turns the int8 kernel for prompt-sized batches on or off
// for the process (where the CPU has it; elsewhere it changes nothing),
// and returns what puts the previous setting back. Tests that hold a
// quantized matmul to float32 rounding of the exact product turn it off;
// the int8 path has tests of its own, held to its rounding bound.
func SetPackedInt8(on bool) (restore func()) {
	v := int32(1)
	if on {
		v = 2
	}
	old := pq8Force.Swap(v)
	return func() { pq8Force.Store(old) }
}

// pq4TileRows is the number of rows in a tile.
const pq4TileRows = 4

// PackedQ4 is a 4-bit matrix [Rows, Cols] in the packed layout.
type PackedQ4 struct {
	Data       []byte
	Rows, Cols int
	GroupSize  int
}

// pq4TileBytes is the size of one tile (hark_pq4_tile_bytes).
func pq4TileBytes(cols, groupSize int) int {
	return cols/128*256 + (cols/groupSize+1)/2*64
}

// PackedQ4Bytes is the length of a PackedQ4's Data for [rows, cols].
func PackedQ4Bytes(rows, cols, groupSize int) int {
	return (rows + pq4TileRows - 1) / pq4TileRows * pq4TileBytes(cols, groupSize)
}

// check validates the matrix against its format and data length.
func (p PackedQ4) check() error {
	if p.Rows < 0 || p.Cols <= 0 || p.Cols%128 != 0 || (p.GroupSize != 64 && p.GroupSize != 128) {
		return fmt.Errorf("kernels: no packed 4-bit layout for [%d, %d] in groups of %d", p.Rows, p.Cols, p.GroupSize)
	}
	if want := PackedQ4Bytes(p.Rows, p.Cols, p.GroupSize); len(p.Data) != want {
		return fmt.Errorf("kernels: packed 4-bit [%d, %d] has %d bytes, want %d", p.Rows, p.Cols, len(p.Data), want)
	}
	return nil
}

// PackedQ4Matmul computes out ([m, Rows]) = x ([m, Cols]) @ Wᵀ for a packed
// matrix, with the results of QMatmul on the MLX layout up to float32
// rounding (up to bf16 rounding where both take the AMX path). Threads:
// GOMAXPROCS.
func PackedQ4Matmul(x []float32, m int, p PackedQ4, out []float32) error {
	if err := p.check(); err != nil {
		return err
	}
	if m < 0 || len(x) < m*p.Cols || len(out) < m*p.Rows {
		return fmt.Errorf("kernels: packed matmul: x has %d values and out %d, want %d and %d for m=%d", len(x), len(out), m*p.Cols, m*p.Rows, m)
	}
	if m == 0 || p.Rows == 0 {
		return nil
	}
	if !PackedQ4Supported(p.Cols, p.GroupSize) {
		return fmt.Errorf("kernels: this CPU has no kernel for the packed 4-bit layout")
	}
	if !amxPackedT(x, m, p, out) {
		packedQ4Matmul(x, m, p, out)
	}
	return nil
}

// PackedQ4Dequantize expands rows [r0, r1) of a packed matrix into out
// ([r1-r0, Cols]), bit-identical to Dequantize on the MLX layout.
func PackedQ4Dequantize(p PackedQ4, r0, r1 int, out []float32) error {
	if err := p.check(); err != nil {
		return err
	}
	if r0 < 0 || r1 > p.Rows || r0 > r1 || len(out) < (r1-r0)*p.Cols {
		return fmt.Errorf("kernels: packed dequantize: rows [%d, %d) of %d into %d values", r0, r1, p.Rows, len(out))
	}
	if r0 == r1 {
		return nil
	}
	if !PackedQ4Supported(p.Cols, p.GroupSize) {
		return fmt.Errorf("kernels: this CPU has no kernel for the packed 4-bit layout")
	}
	packedQ4DequantParallel(p, r0, r1, out)
	return nil
}

// packedQ4DequantParallel expands rows [r0, r1) into out on the workers.
func packedQ4DequantParallel(p PackedQ4, r0, r1 int, out []float32) {
	parallelFor(r1-r0, 1, 16, func(lo, hi int) {
		packedQ4DequantRows(p, r0+lo, r0+hi, out[lo*p.Cols:hi*p.Cols])
	})
}

// packedQ4DequantMatmul is PackedQ4Matmul through dequantized tiles and
// Sgemm: prefill-sized batches, and an x the integer kernel cannot carry.
func packedQ4DequantMatmul(x []float32, m int, p PackedQ4, out []float32) {
	if qgemmPackedT(x, m, p, out) {
		return
	}
	k, n := p.Cols, p.Rows
	tile := max(pq4TileRows, min(n, qmmTileElems/k)/pq4TileRows*pq4TileRows)
	data := getTile(tile * k)
	defer GiveF32(data)
	for j0 := 0; j0 < n; j0 += tile {
		j1 := min(j0+tile, n)
		rows := j1 - j0
		packedQ4DequantParallel(p, j0, j1, data)
		Sgemm(false, true, m, rows, k, 1, x, k, data[:rows*k], k, 0, out[j0:], n)
	}
}
