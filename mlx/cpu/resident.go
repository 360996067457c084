package cpu

import (
	"unsafe"

	"hark/mlx"
)

// residentMinBytes: below one page the move saves nothing.
const residentMinBytes = 64 << 10

// MakeResident implements mlx.ResidentMaker.
func (cpuBackend) MakeResident(a *mlx.Array) {
	b := cb(a)
	if b.mapped != nil || b.parent != nil || b.refs.Load() != 1 {
		return
	}
	raw := dataBytes(b.data)
	mem, mapping := residentBytes(len(raw))
	if mem == nil {
		return // stays on the heap
	}
	copy(mem, raw)
	if b.pooled {
		// An op's output kept for long (Whisper's cross-attention keys and
		// values): its heap buffer goes back for reuse.
		putF32(b.data.([]float32))
		b.pooled = false
	}
	b.data = retype(b.data, mem)
	b.mapped = mapping
}

// residentBytes returns n bytes off the heap and the mapping that holds
// them (for cpuBuf.mapped), or nils when n is below residentMinBytes or
// the system gives no such memory.
func residentBytes(n int) (data, mapping []byte) {
	if n < residentMinBytes {
		return nil, nil
	}
	return mapAnon(n)
}

// dataBytes views a storage slice as bytes.
func dataBytes(d any) []byte {
	switch s := d.(type) {
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	case []uint32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	case []int32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	case []uint16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 2*len(s))
	case []uint8:
		return s
	}
	return nil
}

// retype views mem as a slice of d's element type and length.
func retype(d any, mem []byte) any {
	p := unsafe.Pointer(unsafe.SliceData(mem))
	switch s := d.(type) {
	case []float32:
		return unsafe.Slice((*float32)(p), len(s))
	case []uint32:
		return unsafe.Slice((*uint32)(p), len(s))
	case []int32:
		return unsafe.Slice((*int32)(p), len(s))
	case []uint16:
		return unsafe.Slice((*uint16)(p), len(s))
	}
	return mem[:len(d.([]uint8))]
}

// FromBytesResident implements mlx.ResidentLoader: the storage types whose
// in-memory layout is the file's (little-endian f32, f16/bf16 bits, i32,
// u32, u8) are copied once into resident memory.
func (cpuBackend) FromBytesResident(out *mlx.Array, raw []byte) bool {
	n := out.Size()
	if !littleEndian || len(raw) != n*out.DType().Size() {
		return false
	}
	switch out.DType() {
	case mlx.Float32, mlx.Float16, mlx.BFloat16, mlx.Int32, mlx.Uint32, mlx.Uint8:
	default:
		return false // bool normalises its bytes to 0/1
	}
	mem, mapping := residentBytes(len(raw))
	if mem == nil {
		return false
	}
	copy(mem, raw)
	setMapped(out, mem, n, mapping)
	return true
}

// setMapped makes out's storage n elements of its dtype laid over mem,
// memory outside the Go heap that the buffer owns through mapping.
func setMapped(out *mlx.Array, mem []byte, n int, mapping []byte) {
	p := unsafe.Pointer(unsafe.SliceData(mem))
	var d any
	switch out.DType() {
	case mlx.Float32:
		d = unsafe.Slice((*float32)(p), n)
	case mlx.Float16, mlx.BFloat16:
		d = unsafe.Slice((*uint16)(p), n)
	case mlx.Int32:
		d = unsafe.Slice((*int32)(p), n)
	case mlx.Uint32:
		d = unsafe.Slice((*uint32)(p), n)
	default:
		d = mem[:n:n]
	}
	b := &cpuBuf{data: d, mapped: mapping}
	b.refs.Store(1)
	out.SetStorage(b)
}

// littleEndian: the storage is the file's bytes only on little-endian
// hosts (every platform Hark ships on); others decode through FromBytes.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
