package mlx

import (
	"fmt"
)

// QuantBytes is an MLX affine-quantized matrix [Rows, Cols] as the bytes
// of its three checkpoint tensors where they lie: a safetensors file's
// mapping, whose tensors may start at any byte (mlx-lm writes its header
// unpadded, so a uint32 tensor is as often misaligned as not), with the
// scales and biases in whatever float dtype the checkpoint chose.
type QuantBytes struct {
	// Weight is MLX's packed codes: Rows × Cols*Bits/32 little-endian
	// uint32 words.
	Weight []byte
	// Scales and Biases are Rows × Cols/GroupSize little-endian values of
	// ScaleType (Float32, Float16 or BFloat16) each.
	Scales, Biases  []byte
	ScaleType       DType
	Rows, Cols      int
	GroupSize, Bits int
}

// check validates the byte counts against the shape and format.
func (s QuantBytes) check() error {
	if err := CheckQuantParams(s.GroupSize, s.Bits); err != nil {
		return err
	}
	if s.ScaleType != Float32 && s.ScaleType != Float16 && s.ScaleType != BFloat16 {
		return fmt.Errorf("scales of dtype %v, want a float", s.ScaleType)
	}
	if s.Rows < 0 || s.Cols <= 0 || s.Cols%s.GroupSize != 0 || s.Cols*s.Bits%32 != 0 {
		return fmt.Errorf("[%d, %d] does not fit %d-bit groups of %d", s.Rows, s.Cols, s.Bits, s.GroupSize)
	}
	codes, meta := s.Rows*s.Cols*s.Bits/8, s.Rows*(s.Cols/s.GroupSize)*s.ScaleType.Size()
	if len(s.Weight) != codes || len(s.Scales) != meta || len(s.Biases) != meta {
		return fmt.Errorf("%d code, %d scale and %d bias bytes for [%d, %d], want %d, %d, %d", len(s.Weight), len(s.Scales), len(s.Biases), s.Rows, s.Cols, codes, meta, meta)
	}
	return nil
}

// QuantBytesPacker is implemented by backends that pack quantized
// matrices into their own layout straight from a checkpoint's bytes.
type QuantBytesPacker interface {
	// PacksQuantBytes reports whether PackQuantBytes takes matrices of
	// this format.
	PacksQuantBytes(cols, groupSize, bits int, scaleType DType) bool
	// PackQuantBytes returns the packed storage of the parts' rows one
	// after another (one part: the matrix itself), or nil when it cannot
	// pack these parts as one.
	PackQuantBytes(parts []QuantBytes) *Array
}

// NewQuantMatrixBytes makes a matrix that stays in the checkpoint's bytes
// until Pack puts it into the backend's layout, reading each byte once:
// neither the codes nor the scales are first copied into MLX's arrays, a
// copy that costs as much as the packing (a third of the load time of an
// mlx-lm 4-bit model, whose tensors are misaligned for mapping and whose
// bf16 scales would be widened on the way). It returns nil when the
// default backend does not pack this format from bytes; load the arrays
// then (NewQuantMatrix). The bytes are borrowed: they must stay valid and
// unchanged until the matrix is packed, which its loader does before it
// lets go of the checkpoint. A matrix that is used before that (MLX,
// MatmulT, ...) or that the backend declines to pack first copies its
// bytes into MLX's arrays (float32 scales and biases), its own from then
// on.
func NewQuantMatrixBytes(src QuantBytes) (*QuantMatrix, error) {
	if err := src.check(); err != nil {
		return nil, fmt.Errorf("mlx.NewQuantMatrixBytes: %w", err)
	}
	pk, ok := DefaultBackend().(QuantBytesPacker)
	if !ok || !pk.PacksQuantBytes(src.Cols, src.GroupSize, src.Bits, src.ScaleType) {
		return nil, nil
	}
	return &QuantMatrix{src: &src, rows: src.Rows, cols: src.Cols, groupSize: src.GroupSize, bits: src.Bits}, nil
}

// FromBytes reports whether the matrix still reads the checkpoint's bytes
// (NewQuantMatrixBytes) rather than arrays of its own.
func (q *QuantMatrix) FromBytes() bool { return q.src != nil }

// packBytes packs a matrix still in its checkpoint's bytes, reporting
// whether the backend did.
func (q *QuantMatrix) packBytes() bool {
	pk, ok := DefaultBackend().(QuantBytesPacker)
	if !ok {
		return false
	}
	p := pk.PackQuantBytes([]QuantBytes{*q.src})
	if p == nil {
		return false
	}
	q.src, q.packed = nil, p
	return true
}

// materialize copies a matrix still in its checkpoint's bytes into MLX's
// arrays, its scales and biases as float32, as a loader holds them.
func (q *QuantMatrix) materialize() {
	s := q.src
	if s == nil {
		return
	}
	q.src = nil
	q.wq = residentArray(s.Weight, Uint32, s.Rows, s.Cols*s.Bits/32)
	q.scales = residentArray(s.Scales, s.ScaleType, s.Rows, s.Cols/s.GroupSize)
	q.biases = residentArray(s.Biases, s.ScaleType, s.Rows, s.Cols/s.GroupSize)
}

// residentArray copies raw into a resident array of dt, widened to
// float32 when dt is a 16-bit float. NewQuantMatrixBytes checked the
// sizes, so it cannot fail.
func residentArray(raw []byte, dt DType, shape ...int) *Array {
	a, err := ResidentFromBytes(raw, dt, shape...)
	if err != nil {
		panic("mlx.QuantMatrix: " + err.Error())
	}
	if dt != Float16 && dt != BFloat16 {
		return a
	}
	f := AsType(a, Float32)
	a.Free()
	return Resident(f)
}

// packedBytesMatrices is PackedQuantMatrices for matrices all still in
// their checkpoints' bytes.
func packedBytesMatrices(ms []*QuantMatrix) *QuantMatrix {
	pk, ok := DefaultBackend().(QuantBytesPacker)
	if !ok {
		return nil
	}
	parts := make([]QuantBytes, len(ms))
	total := 0
	for i, m := range ms {
		if m.src == nil || m.cols != ms[0].cols || m.groupSize != ms[0].groupSize || m.bits != ms[0].bits {
			return nil
		}
		parts[i] = *m.src
		total += m.rows
	}
	p := pk.PackQuantBytes(parts)
	if p == nil {
		return nil
	}
	for _, m := range ms {
		m.src = nil // nothing of its own to free: the caller drops it
	}
	return &QuantMatrix{packed: p, rows: total, cols: ms[0].cols, groupSize: ms[0].groupSize, bits: ms[0].bits}
}
