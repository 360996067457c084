package mlx

import "math"

// Conversions between float32 and the two 16-bit float formats. Both round to
// nearest, ties to even, keep infinities and keep NaN a (quiet) NaN, which is
// what MLX's float16_t and bfloat16_t conversions do. Going from a 16-bit
// format to float32 is exact.

// F32ToF16 returns the IEEE binary16 bits nearest to f.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		// Keep the top payload bits and force the quiet bit so the result
		// is a NaN even when the payload lived only in the low bits.
		return sign | 0x7e00 | uint16(mant>>13)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Result is subnormal (or zero): value = m * 2^(exp-150); the f16
		// subnormal unit is 2^-24, so q = m >> (126-exp) = m >> (14-e).
		shift := uint(14 - e)
		if shift >= 25 {
			return sign
		}
		m := mant | 0x800000
		if exp == 0 {
			return sign // f32 subnormals are far below f16's range
		}
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && q&1 == 1) {
			q++ // may carry into the smallest normal, whose encoding is q itself
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && q&1 == 1) {
		q++ // a carry into the exponent is the right answer, up to infinity
	}
	if q >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | uint16(q)
}

// F16ToF32 widens IEEE binary16 bits to float32 exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalise the mantissa.
	e := uint32(113)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// F32ToBF16 returns the bfloat16 bits nearest to f.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // NaN: truncating could give Inf, so set the quiet bit
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens bfloat16 bits to float32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// f16 lookup table: widening is on every hot path that reads f16 data, and
// a 256 KiB table beats the branchy decode.
var f16Table = func() []float32 {
	t := make([]float32, 1<<16)
	for i := range t {
		t[i] = F16ToF32(uint16(i))
	}
	return t
}()

// F16Table is the table behind F16sToF32, indexed by the 16-bit pattern,
// for backends' hot loops. It is shared: never write to it.
func F16Table() []float32 { return f16Table }

// F16sToF32, BF16sToF32, F32sToF16 and F32sToBF16 convert whole slices
// (len(dst) == len(src)) with the rounding of the scalar conversions.
func F16sToF32(dst []float32, src []uint16) {
	t := f16Table
	for i, h := range src {
		dst[i] = t[h]
	}
}

func BF16sToF32(dst []float32, src []uint16) {
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

func F32sToF16(dst []uint16, src []float32) {
	for i, f := range src {
		dst[i] = F32ToF16(f)
	}
}

func F32sToBF16(dst []uint16, src []float32) {
	for i, f := range src {
		dst[i] = F32ToBF16(f)
	}
}
