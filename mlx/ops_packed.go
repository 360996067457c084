package mlx

import (
	"fmt"
)

// PackedQuant is a quantized matrix [rows, cols] that its backend has
// rewritten into a layout of its own, the one its decode kernel streams
// fastest (on the CPU backend: kernels.PackedQ4, 4-bit codes with their
// scales and biases interleaved in tiles of 4 rows). It holds the same
// values as the MLX arrays it came from and replaces all three: a model
// packs a weight once, at load, and frees the originals.
type PackedQuant struct {
	data       *Array // the backend's storage, one array
	rows, cols int
	groupSize  int
	bits       int
}

// quantPacker is implemented by backends that have a packed layout.
type quantPacker interface {
	// packQuant returns the packed storage of a [rows, cols] matrix, or
	// nil when the backend keeps MLX's layout for it.
	packQuant(wq, scales, biases *Array, rows, cols, groupSize, bits int) *Array
	// packedMatmul fills out ([m, rows]) with x ([m, cols]) @ Wᵀ.
	packedMatmul(x *Array, p *PackedQuant, out *Array)
	// packedRows fills out (idx.shape + [cols]) with the dequantized rows
	// idx, or every row when idx is nil.
	packedRows(p *PackedQuant, idx *Array, out *Array)
}

// PackQuantized packs a 2-D quantized matrix (QuantizedLinear's [N, K]
// layout) for its backend's decode kernel. It returns nil, and nothing
// changes, when the backend keeps MLX's layout for this format (other
// bits or group sizes, a CPU without the kernel, HARK_Q4_LAYOUT=mlx). The
// inputs stay valid; the caller frees them once it switches to the result.
func PackQuantized(wq, scales, biases *Array, groupSize, bits int) *PackedQuant {
	be := backendOf("PackQuantized", wq, scales, biases)
	cols := quantCols("PackQuantized", wq, scales, biases, groupSize, bits)
	if len(wq.shape) != 2 {
		panic(fmt.Sprintf("mlx.PackQuantized: packed weights %v must be 2-D", wq.shape))
	}
	pk, ok := be.(quantPacker)
	if !ok {
		return nil
	}
	data := pk.packQuant(wq, scales, biases, wq.shape[0], cols, groupSize, bits)
	if data == nil {
		return nil
	}
	return &PackedQuant{data: data, rows: wq.shape[0], cols: cols, groupSize: groupSize, bits: bits}
}

// Storage is the array holding the packed matrix: the one to keep alive
// (mlx.Resident, the model's list of weights) and to free.
func (p *PackedQuant) Storage() *Array { return p.data }

// Dims returns the matrix shape [rows, cols].
func (p *PackedQuant) Dims() (rows, cols int) { return p.rows, p.cols }

func (p *PackedQuant) String() string {
	return fmt.Sprintf("PackedQuant[%d, %d] %d-bit groups of %d", p.rows, p.cols, p.bits, p.groupSize)
}

func (p *PackedQuant) packer(op string, with *Array) quantPacker {
	return backendOf(op, p.data, with).(quantPacker)
}

// Matmul computes x [..., cols] @ Wᵀ, giving [..., rows] in x's dtype:
// QuantizedMatmul(x, wq, scales, biases, true, ...) on the matrix it
// was packed from.
func (p *PackedQuant) Matmul(x *Array) *Array {
	pk := p.packer("PackedQuant.Matmul", x)
	if len(x.shape) < 1 || !x.dtype.IsFloat() || x.shape[len(x.shape)-1] != p.cols {
		panic(fmt.Sprintf("mlx.PackedQuant.Matmul: x %v must be float with last axis %d", x, p.cols))
	}
	var buf [4]int // newArray copies the shape
	shape := append(append(buf[:0], x.shape[:len(x.shape)-1]...), p.rows)
	out := newArray(x.backend, x.dtype, shape)
	pk.packedMatmul(x, p, out)
	return out
}

// Take dequantizes the rows idx (an integer array of any shape), giving
// idx.shape + [cols] float32: the quantized embedding lookup
// (TakeQuantized) on a packed table.
func (p *PackedQuant) Take(idx *Array) *Array {
	pk := p.packer("PackedQuant.Take", idx)
	if idx.dtype.IsFloat() || idx.dtype == Bool {
		panic("mlx.PackedQuant.Take: indices must be integers, got " + idx.dtype.String())
	}
	out := newArray(p.data.backend, Float32, append(append([]int(nil), idx.shape...), p.cols))
	pk.packedRows(p, idx, out)
	return out
}

// Dequantize expands the whole matrix to float32 [rows, cols], bit for bit
// as Dequantize expands the MLX arrays.
func (p *PackedQuant) Dequantize() *Array {
	pk := p.packer("PackedQuant.Dequantize", nil)
	out := newArray(p.data.backend, Float32, []int{p.rows, p.cols})
	pk.packedRows(p, nil, out)
	return out
}
