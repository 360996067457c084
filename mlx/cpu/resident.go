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
	if b.pooled || b.mapped != nil || b.parent != nil || b.refs.Load() != 1 {
		return
	}
	raw := dataBytes(b.data)
	mem, mapping := residentBytes(len(raw))
	if mem == nil {
		return // stays on the heap
	}
	copy(mem, raw)
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
