package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
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

// PackQ4 writes the MLX 4-bit matrix (w, scales, biases: [rows, cols] in
// groups of groupSize) into dst, PackedQ4Bytes long, in the packed layout.
// The layout exists for rows of a multiple of 128 values in groups of 64
// or 128; PackedQ4Supported says whether this CPU has its kernel.
func PackQ4(w []uint32, scales, biases []float32, rows, cols, groupSize int, dst []byte) (PackedQ4, error) {
	p := PackedQ4{Data: dst, Rows: rows, Cols: cols, GroupSize: groupSize}
	if err := p.check(); err != nil {
		return PackedQ4{}, err
	}
	if err := checkQuantBuffers(w, scales, biases, rows, cols, groupSize, 4); err != nil {
		return PackedQ4{}, err
	}
	// Tiles are independent runs of pq4TileBytes each, written in
	// parallel: packing is most of a quantized model's load time. Only a
	// last, partial tile has padding rows, the bytes nothing else writes.
	gpr, wpr := cols/groupSize, cols/8
	tb := pq4TileBytes(cols, groupSize)
	tiles := (rows + pq4TileRows - 1) / pq4TileRows
	if rows%pq4TileRows != 0 {
		clear(dst[(tiles-1)*tb:])
	}
	parallelFor(tiles, 1, 64, func(t0, t1 int) {
		for t := t0; t < t1; t++ {
			at := t * tb
			for g0 := 0; g0 < gpr; g0 += 2 {
				ng := min(2, gpr-g0)
				blocks := ng * groupSize / 128
				for b := range blocks {
					l := g0*groupSize/128 + b // code block within the row
					for j := range pq4TileRows {
						if r := t*pq4TileRows + j; r < rows {
							putWords(dst[at+j*64:at+(j+1)*64], w[r*wpr+l*16:r*wpr+(l+1)*16])
						}
					}
					at += 256
				}
				for j := range pq4TileRows {
					r := t*pq4TileRows + j
					if r >= rows {
						continue
					}
					for g := range ng {
						putF32(dst[at+4*(2*j+g):], scales[r*gpr+g0+g])
						putF32(dst[at+32+4*(2*j+g):], biases[r*gpr+g0+g])
					}
				}
				at += 64
			}
		}
	})
	return p, nil
}

// putWords writes ws little-endian into dst: on a little-endian host (the
// only ones with the packed kernel, amd64) one copy of their bytes, a
// quarter of a quantized model's load time when done word by word.
func putWords(dst []byte, ws []uint32) {
	if hostLittleEndian {
		copy(dst, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ws))), 4*len(ws)))
		return
	}
	for i, v := range ws {
		binary.LittleEndian.PutUint32(dst[4*i:], v)
	}
}

var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func putF32(dst []byte, v float32) { binary.LittleEndian.PutUint32(dst, math.Float32bits(v)) }

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
