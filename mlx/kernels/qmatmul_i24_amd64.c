//go:build cgo

// The 4-bit × 24-bit-integer kernel for single-token decode on AVX-512 VNNI.
//
// The float kernels turn every 4-bit code into a float before its FMA, and
// at decode that conversion, not memory, sets their speed: a core streams
// weights at two thirds of what it could read. VPDPBUSD multiplies 64 bytes
// by 64 bytes per instruction with no conversion, but only as 8-bit
// integers, and rounding x to 8 bits (as llama.cpp does) would move logits
// far beyond float32 rounding. So each 64-value half-block of x is written
// as a fixed-point number of 24 bits, x ≈ s·(a·2¹⁶ + b·2⁸ + c)/2¹⁶ with a
// power-of-two s and signed 8-bit digits a, b, c. Three VPDPBUSDs give the
// exact integer dot products with each digit; shifting and adding them is
// exact too (the partial sums stay below 2³¹). The only rounding is that of
// x to 24 bits relative to its half-block's largest value (at most 2⁻¹⁷·s),
// the same order as float32's own rounding, so the results agree with the
// float kernels and the float64 reference within the same tolerance.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "qmatmul.h"

// HARK_I24_PF is how far ahead (bytes) the kernel prefetches codes, as in
// the float kernel (see HARK_Q4_PF).
#ifndef HARK_I24_PF
#define HARK_I24_PF 2048
#endif

#define VNNI_TARGET "avx512f,avx512bw,avx512vnni"
#define VNNI __attribute__((target(VNNI_TARGET)))
#define VNNI_INLINE __attribute__((target(VNNI_TARGET), always_inline)) static inline

int hark_q4i24_ok(int k, int gs) {
	return (hark_cpu_features() & HARK_CPU_AVX512VNNI) && k % 128 == 0 &&
	       gs >= 64 && (gs & (gs - 1)) == 0 && k % gs == 0;
}

// pow2_ceil is the smallest power of two >= t for finite t >= 0 (2^-126
// for zero and subnormals, so 1/s stays finite).
static float pow2_ceil(float t) {
	uint32_t b;
	memcpy(&b, &t, 4);
	if (b < 0x00800000u) b = 0x00800000u;
	else if (b & 0x007FFFFFu) b = (b & 0x7F800000u) + 0x00800000u;
	memcpy(&t, &b, 4);
	return t;
}

// Per 128 values of x (one block, 64 packed weight bytes) the digits sit as
// six 64-byte runs: a, b and c, each first for the even values (matched
// with the low nibbles) and then the odd ones (high nibbles). Lanes 0-7 of
// a VPDPBUSD over a block cover values 0-63 and lanes 8-15 values 64-127,
// so xsv holds per block 16 lane scales s/2^16: eight for each half.
enum { I24_BLOCK_BYTES = 384 };

// i24_prep writes the digits of m rows of k values (k % 128 == 0) into xd
// (m*k*3 bytes) and the lane scales into xsv (m*k/8 floats) and, when xsum
// is not NULL, the sums of x over groups of gs (64 or more) into xsum
// (m*k/gs), from the same loads. It returns 0, leaving the caller to use
// the float kernel, when x holds an infinity or NaN, which fixed point
// cannot carry.
VNNI_INLINE int i24_prep(const float* x, int m, int k, int8_t* xd, float* xsv, float* xsum, int gs) {
	const __m512i r128 = _mm512_set1_epi32(128), low8 = _mm512_set1_epi32(255);
	// Gathers the even bytes of 16 into the low 8 and the odd into the high.
	const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
	__m512 nf = _mm512_setzero_ps(); // NaN iff some value is not finite
	for (int i = 0; i < m; i++) {
		__m512 gsum = _mm512_setzero_ps();
		for (int l = 0; l < k / 128; l++) {
			int8_t* d = xd + ((size_t)i * k / 128 + l) * I24_BLOCK_BYTES;
			float* sv = xsv + ((size_t)i * k / 128 + l) * 16;
			for (int h = 0; h < 2; h++) {
				const float* p = x + (size_t)i * k + (size_t)l * 128 + h * 64;
				__m512 v[4], mx = _mm512_setzero_ps();
				for (int j = 0; j < 4; j++) {
					v[j] = _mm512_loadu_ps(p + 16 * j);
					mx = _mm512_max_ps(mx, _mm512_abs_ps(v[j]));
					nf = _mm512_add_ps(nf, _mm512_sub_ps(v[j], v[j]));
				}
				if (xsum) {
					gsum = _mm512_add_ps(gsum, _mm512_add_ps(_mm512_add_ps(v[0], v[1]), _mm512_add_ps(v[2], v[3])));
					const int at = l * 128 + h * 64 + 64; // values of the row summed so far
					if (at % gs == 0) {
						xsum[(size_t)i * (k / gs) + at / gs - 1] = _mm512_reduce_add_ps(gsum);
						gsum = _mm512_setzero_ps();
					}
				}
				// s >= max|x|/127 keeps |a| <= 127; the power of two makes
				// x/s exact.
				const float top = _mm512_reduce_max_ps(mx);
				float s = pow2_ceil(top / 127.0f);
				if (top / s > 127.0f) s *= 2;
				const __m512 inv = _mm512_set1_ps(1.0f / s), f16 = _mm512_set1_ps(65536.0f);
				for (int t = 0; t < 8; t++) sv[h * 8 + t] = s * (1.0f / 65536.0f);
				for (int j = 0; j < 4; j++) {
					// v = a·2^16 + b·2^8 + c with each digit in [-128, 127].
					__m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_mul_ps(v[j], inv), f16));
					__m512i c = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(q, r128), low8), r128);
					__m512i q1 = _mm512_srai_epi32(_mm512_sub_epi32(q, c), 8);
					__m512i b = _mm512_sub_epi32(_mm512_and_si512(_mm512_add_epi32(q1, r128), low8), r128);
					__m512i a = _mm512_srai_epi32(_mm512_sub_epi32(q1, b), 8);
					__m512i digits[3] = {a, b, c};
					const int at = h * 32 + j * 8; // byte of the block these 16 values pack into
					for (int dd = 0; dd < 3; dd++) {
						__m128i bytes = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(digits[dd]), split);
						_mm_storel_epi64((__m128i*)(d + dd * 128 + at), bytes);
						_mm_storel_epi64((__m128i*)(d + dd * 128 + 64 + at), _mm_unpackhi_epi64(bytes, bytes));
					}
				}
			}
		}
	}
	// One check at the end: a value that is not finite only spoils digits
	// the caller then never reads.
	return _mm512_reduce_add_ps(nf) == 0;
}

// hark_q4i24_prep writes x's digits and lane scales (i24_prep).
VNNI int hark_q4i24_prep(const float* x, int m, int k, int8_t* xd, float* xsv) {
	return i24_prep(x, m, k, xd, xsv, NULL, 0);
}

// hark_q4i24_prep_sums is hark_q4i24_prep that also writes the group sums
// of x (groups of gs, a power of two of 64 or more), in one pass.
VNNI int hark_q4i24_prep_sums(const float* x, int m, int k, int gs, int8_t* xd, float* xsv, float* xsum) {
	return i24_prep(x, m, k, xd, xsv, xsum, gs);
}

// q4i24_rows computes NI (1..4) rows of x against one weight row. Per block
// it splits the 64 code bytes into low and high nibbles once and runs three
// VPDPBUSDs per nibble half and row; the bias term uses the group sums of x.
VNNI_INLINE void q4i24_rows(const uint8_t* wb, const float* sc, const float* bi, const int8_t* xd,
                            const float* xsv, const float* xsum, int k, int gshift, int NI, float* out, int ldo) {
	const int nb = k / 128, gpr = k >> gshift;
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
	for (int l = 0; l < nb; l++) {
#if HARK_I24_PF > 0
		_mm_prefetch((const char*)wb + (size_t)l * 64 + HARK_I24_PF, _MM_HINT_T0);
#endif
		__m512i w = _mm512_loadu_si512(wb + (size_t)l * 64);
		__m512i lo = _mm512_and_si512(w, m4), hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
		__m512 ws = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(sc[(l * 128) >> gshift]),
		                                 _mm512_set1_ps(sc[(l * 128 + 64) >> gshift]));
		for (int ii = 0; ii < NI; ii++) {
			const int8_t* d = xd + ((size_t)ii * nb + l) * I24_BLOCK_BYTES;
			__m512i a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(d));
			__m512i b = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(d + 128));
			__m512i c = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, _mm512_loadu_si512(d + 256));
			a = _mm512_dpbusd_epi32(a, hi, _mm512_loadu_si512(d + 64));
			b = _mm512_dpbusd_epi32(b, hi, _mm512_loadu_si512(d + 192));
			c = _mm512_dpbusd_epi32(c, hi, _mm512_loadu_si512(d + 320));
			// Per lane |a| <= 8·15·128, so a·2^16 + b·2^8 + c < 2^31.
			__m512i t = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(a, 16), _mm512_slli_epi32(b, 8)), c);
			__m512 s = _mm512_mul_ps(ws, _mm512_loadu_ps(xsv + ((size_t)ii * nb + l) * 16));
			acc[ii] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), s, acc[ii]);
		}
	}
	for (int ii = 0; ii < NI; ii++) {
		float bsum = 0;
		for (int g = 0; g < gpr; g++) bsum += bi[g] * xsum[(size_t)ii * gpr + g];
		out[(size_t)ii * ldo] = _mm512_reduce_add_ps(acc[ii]) + bsum;
	}
}

// hark_q4i24 is hark_qmm_t for 4-bit weights with x prepared by
// hark_q4i24_prep (only after hark_q4i24_ok).
VNNI void hark_q4i24(const int8_t* xd, const float* xsv, const float* xsum, int m, const hark_qmat* q,
                     int j0, int j1, float* out, int ldo) {
	const int k = q->cols, gpr = k / q->gs, gshift = __builtin_ctz(q->gs);
	for (int j = j0; j < j1; j++) {
		const uint8_t* wb = (const uint8_t*)(q->w + (size_t)j * (k / 8));
		const float* sc = q->scales + (size_t)j * gpr;
		const float* bi = q->biases + (size_t)j * gpr;
		for (int i0 = 0; i0 < m; i0 += 4) {
			const int8_t* d = xd + (size_t)i0 * k * 3;
			const float* sv = xsv + (size_t)i0 * k / 8;
			const float* xs = xsum + (size_t)i0 * gpr;
			float* out_ = out + (size_t)i0 * ldo + j;
			DISPATCH_NI(q4i24_rows, m - i0, wb, sc, bi, d, sv, xs, k, gshift)
		}
	}
}
