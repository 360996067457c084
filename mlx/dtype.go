package mlx

import "fmt"

// DType is the element type of an Array.
type DType uint8

// The dtypes Hark needs. The order is not significant; promotion uses
// promoteTable below.
const (
	Bool DType = iota
	Uint8
	Uint32
	Int32
	Float16
	BFloat16
	Float32
)

var dtypeNames = [...]string{"bool", "uint8", "uint32", "int32", "float16", "bfloat16", "float32"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes one element occupies in memory.
func (d DType) Size() int {
	switch d {
	case Bool, Uint8:
		return 1
	case Float16, BFloat16:
		return 2
	default:
		return 4
	}
}

// IsFloat reports whether d is a floating-point dtype.
func (d DType) IsFloat() bool { return d == Float16 || d == BFloat16 || d == Float32 }

// IsInteger reports whether d is an integer dtype (bool excluded).
func (d DType) IsInteger() bool { return d == Uint8 || d == Uint32 || d == Int32 }

// ParseDType maps a name ("float32", "f32", "bfloat16", "bf16", safetensors'
// "F32"/"F16"/"BF16"/"I32"/"U32"/"U8"/"BOOL") to a DType.
func ParseDType(s string) (DType, error) {
	switch s {
	case "bool", "BOOL":
		return Bool, nil
	case "uint8", "u8", "U8":
		return Uint8, nil
	case "uint32", "u32", "U32":
		return Uint32, nil
	case "int32", "i32", "I32":
		return Int32, nil
	case "float16", "f16", "F16":
		return Float16, nil
	case "bfloat16", "bf16", "BF16":
		return BFloat16, nil
	case "float32", "f32", "F32":
		return Float32, nil
	}
	return 0, fmt.Errorf("mlx: unknown dtype %q", s)
}

// PromoteTypes returns the dtype of a binary op between a and b, following
// MLX's promotion table restricted to our dtypes:
//   - equal dtypes are unchanged; bool promotes to the other operand;
//   - between integers, the wider wins (u8<u32, u8<i32); u32 with i32 would
//     be int64 in MLX, which Hark lacks, so it gives int32 (documented loss);
//   - integer with a float gives that float;
//   - float16 with bfloat16 gives float32 (as in MLX);
//   - float32 beats both 16-bit floats.
func PromoteTypes(a, b DType) DType {
	if a == b {
		return a
	}
	if a == Bool {
		return b
	}
	if b == Bool {
		return a
	}
	af, bf := a.IsFloat(), b.IsFloat()
	switch {
	case af && bf:
		if a == Float32 || b == Float32 {
			return Float32
		}
		return Float32 // f16 with bf16
	case af:
		return a
	case bf:
		return b
	}
	// both integers, different
	if a == Uint8 {
		return b
	}
	if b == Uint8 {
		return a
	}
	return Int32 // u32 with i32
}
