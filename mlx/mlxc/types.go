package mlxc

import "math"

// The mlx-c value types as the C ABI passes them. A handle is
// struct { void* ctx; }: one pointer-sized word in a general register on
// amd64 and arm64, exactly like a uintptr. An optional is
// struct { T value; bool has_value; } of eight bytes, which both ABIs pass
// in one general register: value in the low four bytes, the flag in the
// fifth.
type (
	array       uintptr
	stream      uintptr
	device      uintptr
	vectorArray uintptr
	mlxString   uintptr
	dtype       int32

	optionalInt   uint64
	optionalFloat uint64
	optionalDtype uint64
)

func someInt(v int) optionalInt         { return optionalInt(uint64(uint32(int32(v))) | 1<<32) }
func someFloat(v float32) optionalFloat { return optionalFloat(uint64(math.Float32bits(v)) | 1<<32) }
func someDtype(d dtype) optionalDtype   { return optionalDtype(uint64(uint32(d)) | 1<<32) }

const noDtype optionalDtype = 0

// symbol is one entry of the generated table: the C name, whether the
// library may lack it, and the field the loader binds.
type symbol struct {
	name     string
	optional bool
	fn       any
}
