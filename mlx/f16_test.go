package mlx_test

import (
	"math"
	"sort"
	"testing"

	"hark/mlx"
)

// f16Value decodes binary16 bits from the IEEE definition, independently of
// the package: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals 2^-14 * m/1024.
func f16Value(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	case 0:
		return s * math.Ldexp(m/1024, -14)
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func TestF16DecodeAllPatterns(t *testing.T) {
	leakFree(t)
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := float64(mlx.F16ToF32(h))
		want := f16Value(h)
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("%#04x: got %v, want NaN", h, got)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("%#04x: got %v, want %v", h, got, want)
		}
	}
}

func TestF16RoundTripAllPatterns(t *testing.T) {
	leakFree(t)
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		back := mlx.F32ToF16(mlx.F16ToF32(h))
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 { // NaN: stays NaN, sign kept
			if back&0x7c00 != 0x7c00 || back&0x3ff == 0 || back&0x8000 != h&0x8000 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, mlx.F16ToF32(h), back)
		}
	}
}

// nearestF16 finds the binary16 value nearest to v by binary search over
// all positive finite values, ties to the even mantissa, overflow to Inf at
// 65520 (the IEEE rounding boundary).
var posF16 = func() []float64 {
	var r []float64
	for i := 0; i < 0x7c00; i++ {
		r = append(r, f16Value(uint16(i)))
	}
	return r
}()

func nearestF16(v float64) uint16 {
	sign := uint16(0)
	if math.Signbit(v) {
		sign = 0x8000
		v = -v
	}
	if v >= 65520 {
		return sign | 0x7c00
	}
	i := sort.SearchFloat64s(posF16, v) // first >= v
	if i == len(posF16) {
		return sign | 0x7bff // (65504, 65520) rounds down to the largest finite
	}
	if i < len(posF16) && posF16[i] == v {
		return sign | uint16(i)
	}
	lo, hi := i-1, i
	dl, dh := v-posF16[lo], posF16[hi]-v
	switch {
	case dl < dh:
		return sign | uint16(lo)
	case dh < dl:
		return sign | uint16(hi)
	}
	if lo%2 == 0 {
		return sign | uint16(lo)
	}
	return sign | uint16(hi)
}

func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	leakFree(t)
	r := newRNG(1)
	check := func(f float32) {
		got := mlx.F32ToF16(f)
		want := nearestF16(float64(f))
		if got != want {
			t.Fatalf("F32ToF16(%g = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
	// every f16 value, its midpoints with neighbours, and a hair either side
	for i := 0; i < 0x7c00-1; i++ {
		a, b := f16Value(uint16(i)), f16Value(uint16(i+1))
		mid := float32((a + b) / 2)
		for _, f := range []float32{float32(a), mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9)} {
			check(f)
			check(-f)
		}
	}
	for i := 0; i < 200000; i++ {
		check(math.Float32frombits(r.Uint32() & 0x7f7fffff)) // random finite
	}
	for _, f := range []float32{65504, 65519.99, 65520, 1e10, 5.96e-8, 2.98e-8, 2.9802322e-08, 1e-30} {
		check(f)
	}
	if h := mlx.F32ToF16(float32(math.Inf(-1))); h != 0xfc00 {
		t.Fatalf("-Inf -> %#04x", h)
	}
	nan := math.Float32frombits(0x7f800001) // payload only in the low bits
	if h := mlx.F32ToF16(nan); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Fatalf("NaN -> %#04x, not a NaN", h)
	}
}

func TestBF16(t *testing.T) {
	leakFree(t)
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := mlx.BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) wrong", h)
		}
		back := mlx.F32ToBF16(f)
		if f != f {
			if mlx.BF16ToF32(back) == mlx.BF16ToF32(back) {
				t.Fatalf("NaN %#04x -> %#04x", h, back)
			}
			continue
		}
		if back != h {
			t.Fatalf("bf16 %#04x round trip gave %#04x", h, back)
		}
	}
	r := newRNG(2)
	for i := 0; i < 200000; i++ {
		b := r.Uint32()
		f := math.Float32frombits(b)
		got := mlx.F32ToBF16(f)
		if f != f {
			if g := mlx.BF16ToF32(got); g == g {
				t.Fatalf("NaN %#08x -> %#04x", b, got)
			}
			continue
		}
		// reference: the two bf16 candidates around f, pick nearest, tie even
		lo := uint16(b >> 16)
		hi := lo + 1
		vl, vh := float64(mlx.BF16ToF32(lo)), float64(mlx.BF16ToF32(hi))
		if hi&0x7fff == 0x7f80 { // overflow: Inf sits where 2^128 would be
			vh = math.Copysign(math.Ldexp(1, 128), vl)
		}
		v := float64(f)
		want := lo
		dl, dh := math.Abs(v-vl), math.Abs(vh-v)
		if dh < dl || (dh == dl && lo&1 == 1) {
			want = hi
		}
		if b&0xffff == 0 {
			want = lo
		}
		if got != want {
			t.Fatalf("F32ToBF16(%g = %#08x) = %#04x, want %#04x", f, b, got, want)
		}
	}
}
