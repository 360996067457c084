package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// ScaleFormat is the dtype of a 4-bit matrix's scales and biases as its
// checkpoint stores them.
type ScaleFormat int

const (
	ScaleF32  ScaleFormat = iota // little-endian float32
	ScaleBF16                    // bfloat16 (mlx-lm's usual choice)
	ScaleF16                     // IEEE binary16
)

// size is the bytes of one value.
func (f ScaleFormat) size() int {
	if f == ScaleF32 {
		return 4
	}
	return 2
}

// Q4Bytes is an MLX 4-bit matrix of Rows rows as the bytes of its three
// checkpoint tensors, read where they lie (a mapped safetensors file,
// whose tensors start at any byte: mlx-lm writes its header unpadded).
// Nothing here is read as a wider type, so no alignment is assumed.
type Q4Bytes struct {
	// Weight is MLX's packed words, Rows × cols/8 little-endian uint32.
	Weight []byte
	// Scales and Biases are Rows × cols/groupSize values of Format each.
	Scales, Biases []byte
	Format         ScaleFormat
	Rows           int
}

// check validates the byte counts against [Rows, cols] in groups.
func (q Q4Bytes) check(cols, groupSize int) error {
	if q.Format < ScaleF32 || q.Format > ScaleF16 {
		return fmt.Errorf("kernels: unknown scale format %d", q.Format)
	}
	groups := q.Rows * (cols / groupSize) * q.Format.size()
	if len(q.Weight) < q.Rows*cols/2 || len(q.Scales) < groups || len(q.Biases) < groups {
		return fmt.Errorf("kernels: 4-bit [%d, %d] groups of %d has %d code, %d scale and %d bias bytes, want %d, %d, %d",
			q.Rows, cols, groupSize, len(q.Weight), len(q.Scales), len(q.Biases), q.Rows*cols/2, groups, groups)
	}
	return nil
}

// PackQ4 writes the MLX 4-bit matrix (w, scales, biases: [rows, cols] in
// groups of groupSize) into dst, PackedQ4Bytes long, in the packed layout.
// The layout exists for rows of a multiple of 128 values in groups of 64
// or 128; PackedQ4Supported says whether this CPU has its kernel.
func PackQ4(w []uint32, scales, biases []float32, rows, cols, groupSize int, dst []byte) (PackedQ4, error) {
	if err := checkQuantBuffers(w, scales, biases, rows, cols, groupSize, 4); err != nil {
		return PackedQ4{}, err
	}
	if !hostLittleEndian {
		return PackedQ4{}, fmt.Errorf("kernels: no packed 4-bit layout on a big-endian host")
	}
	return PackQ4Bytes(Q4Bytes{Weight: bytesOf(w), Scales: bytesOf(scales), Biases: bytesOf(biases), Format: ScaleF32, Rows: rows}, cols, groupSize, dst)
}

// bytesOf views a slice of 4-byte values as its bytes in memory.
func bytesOf[T uint32 | float32](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// PackQ4Bytes is PackQ4 from the checkpoint's bytes: the codes are copied
// as they lie (the layout keeps MLX's little-endian words) and the scales
// and biases widened to float32 on the way, so a checkpoint that is
// mapped, at whatever alignment and in whatever scale dtype, goes into
// the packed layout without first being copied into MLX's arrays (which
// is as much memory traffic as the packing itself).
func PackQ4Bytes(src Q4Bytes, cols, groupSize int, dst []byte) (PackedQ4, error) {
	rows := src.Rows
	p := PackedQ4{Data: dst, Rows: rows, Cols: cols, GroupSize: groupSize}
	if err := p.check(); err != nil {
		return PackedQ4{}, err
	}
	if err := src.check(cols, groupSize); err != nil {
		return PackedQ4{}, err
	}
	// Tiles are independent runs of pq4TileBytes each, written in
	// parallel: packing is most of a quantized model's load time. Only a
	// last, partial tile has padding rows, the bytes nothing else writes.
	gpr, rowBytes := cols/groupSize, cols/2
	tb := pq4TileBytes(cols, groupSize)
	tiles := (rows + pq4TileRows - 1) / pq4TileRows
	if rows%pq4TileRows != 0 {
		clear(dst[(tiles-1)*tb:])
	}
	es := src.Format.size()
	parallelFor(tiles, 1, 64, func(t0, t1 int) {
		for t := t0; t < t1; t++ {
			at := t * tb
			n := min(pq4TileRows, rows-t*pq4TileRows) // real rows in the tile
			for g0 := 0; g0 < gpr; g0 += 2 {
				ng := min(2, gpr-g0)
				blocks := ng * groupSize / 128
				for b := range blocks {
					l := g0*groupSize/128 + b // code block within the row
					for j := range n {
						r := t*pq4TileRows + j
						copy(dst[at+j*64:at+(j+1)*64], src.Weight[r*rowBytes+l*64:r*rowBytes+(l+1)*64])
					}
					at += 256
				}
				putMetaTile(dst[at:at+64], src, ((t*pq4TileRows)*gpr+g0)*es, gpr*es, n, ng)
				at += 64
			}
		}
	})
	return p, nil
}

// putMetaTile writes a superblock's 64 bytes of meta for the n rows of a
// tile: the ng (1 or 2) scales and then biases of each row as
// little-endian float32, [row][group], widened from the checkpoint's
// values at from (the first row's) plus stride bytes per row. A single
// group leaves a zero beside it, whatever dst held.
func putMetaTile(dst []byte, src Q4Bytes, from, stride, n, ng int) {
	dst = dst[:64]
	if ng == 1 {
		clear(dst)
	}
	es := src.Format.size()
	for j := range n {
		o := from + j*stride
		sc, bi := src.Scales[o:o+ng*es], src.Biases[o:o+ng*es]
		for g := range ng {
			var s, b uint32
			switch src.Format {
			case ScaleF32:
				s, b = binary.LittleEndian.Uint32(sc[4*g:]), binary.LittleEndian.Uint32(bi[4*g:])
			case ScaleBF16:
				s, b = uint32(binary.LittleEndian.Uint16(sc[2*g:]))<<16, uint32(binary.LittleEndian.Uint16(bi[2*g:]))<<16
			default:
				s = math.Float32bits(f16ToF32(binary.LittleEndian.Uint16(sc[2*g:])))
				b = math.Float32bits(f16ToF32(binary.LittleEndian.Uint16(bi[2*g:])))
			}
			binary.LittleEndian.PutUint32(dst[8*j+4*g:], s)
			binary.LittleEndian.PutUint32(dst[32+8*j+4*g:], b)
		}
	}
}
