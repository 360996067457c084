package mlx

import (
	"fmt"
)

// QuantMatrix is an MLX affine-quantized matrix [rows, cols] (the layout
// of QuantizedLinear weights and quantized embeddings) as a value that
// models use without knowing how it is stored. It starts as MLX's three
// arrays; Pack lets its backend rewrite it into a layout of its own, the
// one its kernels stream fastest (on the cpu backend: 4-bit codes with
// their scales and biases interleaved in tiles of 4 rows). Either way it
// computes the same values. A matrix made from a checkpoint's bytes
// (NewQuantMatrixBytes) has neither until it is packed.
type QuantMatrix struct {
	wq, scales, biases *Array      // MLX's layout; nil once packed
	packed             *Array      // the backend's layout; nil until packed
	src                *QuantBytes // the checkpoint's bytes, until packed or copied
	rows, cols         int
	groupSize, bits    int
}

// NewQuantMatrix wraps a 2-D quantized matrix: wq [rows, cols*bits/32]
// uint32 with scales and biases [rows, cols/groupSize], or an MXFP4 one
// with nil biases and uint8 scales (ops_quant_mx.go). The matrix takes
// the arrays over: free them through it (Arrays) and not otherwise.
func NewQuantMatrix(wq, scales, biases *Array, groupSize, bits int) *QuantMatrix {
	backendOf("NewQuantMatrix", wq, scales, biases)
	cols := quantCols("NewQuantMatrix", wq, scales, biases, groupSize, bits)
	if len(wq.shape) != 2 {
		panic(fmt.Sprintf("mlx.NewQuantMatrix: packed weights %v must be 2-D", wq.shape))
	}
	return &QuantMatrix{wq: wq, scales: scales, biases: biases, rows: wq.shape[0], cols: cols, groupSize: groupSize, bits: bits}
}

// Dims returns the matrix shape [rows, cols].
func (q *QuantMatrix) Dims() (rows, cols int) { return q.rows, q.cols }

// GroupSize and Bits are the quantization format.
func (q *QuantMatrix) GroupSize() int { return q.groupSize }
func (q *QuantMatrix) Bits() int      { return q.bits }

func (q *QuantMatrix) String() string {
	layout := "MLX layout"
	if q.src != nil {
		layout = "checkpoint bytes"
	} else if q.packed != nil {
		layout = q.packed.backend.Name() + " layout"
	}
	return fmt.Sprintf("QuantMatrix[%d, %d] %d-bit groups of %d, %s", q.rows, q.cols, q.bits, q.groupSize, layout)
}

// Arrays are the arrays that hold the matrix now: the ones to keep alive
// (Resident, a model's list of weights) and to free: none for a matrix
// still in its checkpoint's bytes.
func (q *QuantMatrix) Arrays() []*Array {
	if q.src != nil {
		return nil
	}
	if q.packed != nil {
		return []*Array{q.packed}
	}
	if q.biases == nil {
		return []*Array{q.wq, q.scales} // MXFP4
	}
	return []*Array{q.wq, q.scales, q.biases}
}

// MLX returns the matrix in MLX's layout, and false once the backend has
// packed it. Loaders use it to join matrices (fused projections) before
// packing. A matrix still in its checkpoint's bytes copies them into
// arrays first (NewQuantMatrixBytes).
func (q *QuantMatrix) MLX() (wq, scales, biases *Array, ok bool) {
	q.materialize()
	return q.wq, q.scales, q.biases, q.packed == nil
}

// Packed reports whether the backend holds the matrix in its own layout.
func (q *QuantMatrix) Packed() bool { return q.packed != nil }

// Affine reports whether the matrix is in MLX's affine mode (scales and
// biases), not MXFP4.
func (q *QuantMatrix) Affine() bool { return q.src != nil || q.biases != nil }

// Pack asks the backend for its own layout. When it has one for this
// format (QuantPacker; on the cpu backend 4-bit groups of 64 or 128 with
// AVX-512 VNNI and GFNI, unless HARK_Q4_LAYOUT=mlx), the matrix switches to
// it and Pack returns the MLX arrays it no longer uses, for the caller to
// free; otherwise nothing changes and Pack returns nil. A matrix still in
// its checkpoint's bytes packs from them (QuantBytesPacker) and has no
// arrays to return; should the backend decline, it copies them into
// arrays (check Packed, and take Arrays over).
func (q *QuantMatrix) Pack() (replaced []*Array) {
	if q.packed != nil {
		return nil
	}
	if q.src != nil {
		if q.packBytes() {
			return nil
		}
		q.materialize()
	}
	pk, ok := backendOf("QuantMatrix.Pack", q.wq, q.scales, q.biases).(QuantPacker)
	if !ok {
		return nil
	}
	p := pk.PackQuant(q.wq, q.scales, q.biases, q.rows, q.cols, q.groupSize, q.bits)
	if p == nil {
		return nil
	}
	replaced = q.Arrays()
	q.wq, q.scales, q.biases, q.packed = nil, nil, nil, p
	return replaced
}

func (q *QuantMatrix) packer(op string, with *Array) QuantPacker {
	return backendOf(op, q.packed, with).(QuantPacker)
}

// MatmulT computes x [..., cols] @ Wᵀ, giving [..., rows] in x's dtype:
// QuantizedMatmul(x, wq, scales, biases, true, ...).
func (q *QuantMatrix) MatmulT(x *Array) *Array {
	q.materialize()
	if q.packed == nil {
		return QuantizedMatmul(x, q.wq, q.scales, q.biases, true, q.groupSize, q.bits)
	}
	pk := q.packer("QuantMatrix.MatmulT", x)
	if len(x.shape) < 1 || !x.dtype.IsFloat() || x.shape[len(x.shape)-1] != q.cols {
		panic(fmt.Sprintf("mlx.QuantMatrix.MatmulT: x %v must be float with last axis %d", x, q.cols))
	}
	var buf [4]int // newArray copies the shape
	shape := append(append(buf[:0], x.shape[:len(x.shape)-1]...), q.rows)
	out := newArray(x.backend, x.dtype, shape)
	pk.PackedMatmul(x, q.packed, q.rows, q.cols, q.groupSize, q.bits, out)
	return out
}

// Take dequantizes the rows idx (an integer array of any shape), giving
// idx.shape + [cols]: the quantized embedding lookup (TakeQuantized).
func (q *QuantMatrix) Take(idx *Array) *Array {
	q.materialize()
	if q.packed == nil {
		return TakeQuantized(q.wq, q.scales, q.biases, idx, q.groupSize, q.bits)
	}
	pk := q.packer("QuantMatrix.Take", idx)
	if idx.dtype.IsFloat() || idx.dtype == Bool {
		panic("mlx.QuantMatrix.Take: indices must be integers, got " + idx.dtype.String())
	}
	out := newArray(q.packed.backend, Float32, append(append([]int(nil), idx.shape...), q.cols))
	pk.PackedRows(q.packed, q.rows, q.cols, q.groupSize, q.bits, idx, out)
	return out
}

// Dequantize expands the whole matrix to float [rows, cols], bit for bit
// as Dequantize expands the MLX arrays.
func (q *QuantMatrix) Dequantize() *Array {
	q.materialize()
	if q.packed == nil {
		return Dequantize(q.wq, q.scales, q.biases, q.groupSize, q.bits)
	}
	pk := q.packer("QuantMatrix.Dequantize", nil)
	out := newArray(q.packed.backend, Float32, []int{q.rows, q.cols})
	pk.PackedRows(q.packed, q.rows, q.cols, q.groupSize, q.bits, nil, out)
	return out
}
