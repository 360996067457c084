package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// decodeFloat32s converts little-endian float data to float32, reading
// byte-wise because the source may sit at any alignment.
func decodeFloat32s(dt DType, src []byte) ([]float32, error) {
	switch dt {
	case F32:
		out := make([]float32, len(src)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
		return out, nil
	case F16:
		out := make([]float32, len(src)/2)
		for i := range out {
			out[i] = F16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return out, nil
	case BF16:
		out := make([]float32, len(src)/2)
		for i := range out {
			out[i] = BF16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
		}
		return out, nil
	case F64:
		out := make([]float32, len(src)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:])))
		}
		return out, nil
	}
	return nil, fmt.Errorf("dtype %s is not a float type", dt)
}

func decodeUint32s(src []byte) []uint32 {
	out := make([]uint32, len(src)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(src[4*i:])
	}
	return out
}

// BF16ToFloat32 widens a bfloat16: it is the top half of a float32.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F16ToFloat32 widens an IEEE half exactly, subnormals, infinities and NaN
// payloads included.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload bits
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	case exp != 0: // normal: rebias 15 → 127
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half: value = man * 2^-24, exact in float32.
	f := float32(man) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}
