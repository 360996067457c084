//go:build cgo

// AVX2/FMA and AVX-512 quantized-matmul kernels for amd64. The file is
// compiled for the baseline x86-64 ISA; only functions marked with a target
// attribute use the wider instructions, and they run only after
// hark_cpu_features has seen the CPU (and OS) support them, so the binary
// still runs on older CPUs.

#include <immintrin.h>
#include <stddef.h>
#include "qmatmul.h"

// HARK_Q4_PF is how far ahead (bytes) the AVX-512 4-bit kernel asks for
// the codes it will read. At this kernel's compute rate the out-of-order
// window holds only a few cache lines of one row stream, too few misses in
// flight to keep a core streaming from DRAM; prefetches retire at once and
// raise that count. On the 2-core EPYC test machine, decode of a 0.5B q4
// model gained about 5-10% in interleaved runs; 0 turns it off.
#ifndef HARK_Q4_PF
#define HARK_Q4_PF 2048
#endif

// The dequantize kernel must round scale*q before adding the bias, as MLX
// does. GCC lowers the intrinsics to plain vector arithmetic and would fuse
// mul+add into an FMA where the target has one; keep contraction off (the
// dot-product kernels write their FMAs explicitly).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

// hark_cpu_features probes once; a racing first call just probes twice and
// stores the same value.
int hark_cpu_features(void) {
	static volatile int cached = -1;
	if (cached >= 0) return cached;
	__builtin_cpu_init();
	int f = 0;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= HARK_CPU_AVX2_FMA;
	if (__builtin_cpu_supports("avx512f")) f |= HARK_CPU_AVX512F;
	if ((f & HARK_CPU_AVX512F) && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
		f |= HARK_CPU_AVX512VNNI;
	if ((f & HARK_CPU_AVX512F) && __builtin_cpu_supports("avx512vl")) f |= HARK_CPU_AVX512VL;
	if ((f & HARK_CPU_AVX512F) && __builtin_cpu_supports("gfni")) f |= HARK_CPU_GFNI;
	if ((f & HARK_CPU_AVX2_FMA) && __builtin_cpu_supports("f16c")) f |= HARK_CPU_F16C;
	cached = f;
	return f;
}

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline

AVX2_INLINE float hsum256(__m256 v) {
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

// q4_rows handles NI (1..4) rows of x against one weight row. Per 8 packed
// bytes (16 codes) it widens the bytes to 32-bit lanes once; low nibbles
// are the even codes and high nibbles the odd ones, matched against x in
// the even-first order of xde. Each group's x·q accumulates in vectors and
// is scaled by the group's scale without a horizontal sum; the bias term
// uses the precomputed group sums of x.
AVX2_INLINE void q4_rows(const uint8_t* wb, const float* sc, const float* bi, const float* xde,
                         const float* xsum, int k, int gs, int NI, float* out, int ldo) {
	const int gpr = k / gs;
	const __m256i lo4 = _mm256_set1_epi32(0xF);
	__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
	float bsum[4] = {0, 0, 0, 0};
	for (int g = 0; g < gpr; g++) {
		__m256 ga[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
		const uint8_t* gb = wb + (size_t)g * gs / 2;
		const float* xg = xde + (size_t)g * gs;
		for (int c = 0; c < gs; c += 16) {
			__m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(gb + c / 2)));
			__m256 qe = _mm256_cvtepi32_ps(_mm256_and_si256(v, lo4));
			__m256 qo = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
			for (int ii = 0; ii < NI; ii++) {
				const float* xr = xg + (size_t)ii * k + c;
				ga[ii] = _mm256_fmadd_ps(qe, _mm256_loadu_ps(xr), ga[ii]);
				ga[ii] = _mm256_fmadd_ps(qo, _mm256_loadu_ps(xr + 8), ga[ii]);
			}
		}
		__m256 sv = _mm256_set1_ps(sc[g]);
		for (int ii = 0; ii < NI; ii++) {
			acc[ii] = _mm256_fmadd_ps(sv, ga[ii], acc[ii]);
			bsum[ii] += bi[g] * xsum[(size_t)ii * gpr + g];
		}
	}
	for (int ii = 0; ii < NI; ii++) out[(size_t)ii * ldo] = hsum256(acc[ii]) + bsum[ii];
}

// q8_rows is q4_rows for 8-bit codes: one byte per code, natural order.
AVX2_INLINE void q8_rows(const uint8_t* wb, const float* sc, const float* bi, const float* x,
                         const float* xsum, int k, int gs, int NI, float* out, int ldo) {
	const int gpr = k / gs;
	__m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
	float bsum[4] = {0, 0, 0, 0};
	for (int g = 0; g < gpr; g++) {
		__m256 ga[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
		const uint8_t* gb = wb + (size_t)g * gs;
		const float* xg = x + (size_t)g * gs;
		for (int c = 0; c < gs; c += 8) {
			__m256 qv = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(gb + c))));
			for (int ii = 0; ii < NI; ii++)
				ga[ii] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(xg + (size_t)ii * k + c), ga[ii]);
		}
		__m256 sv = _mm256_set1_ps(sc[g]);
		for (int ii = 0; ii < NI; ii++) {
			acc[ii] = _mm256_fmadd_ps(sv, ga[ii], acc[ii]);
			bsum[ii] += bi[g] * xsum[(size_t)ii * gpr + g];
		}
	}
	for (int ii = 0; ii < NI; ii++) out[(size_t)ii * ldo] = hsum256(acc[ii]) + bsum[ii];
}

#define AVX512 __attribute__((target("avx512f")))
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) static inline

// q4_rows512 is q4_rows with 16-lane vectors: 16 packed bytes (32 codes)
// per step, x reordered even-first in blocks of 32.
AVX512_INLINE void q4_rows512(const uint8_t* wb, const float* sc, const float* bi, const float* xde,
                              const float* xsum, int k, int gs, int NI, float* out, int ldo) {
	const int gpr = k / gs;
	const __m512i lo4 = _mm512_set1_epi32(0xF);
	__m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
	float bsum[4] = {0, 0, 0, 0};
	for (int g = 0; g < gpr; g++) {
		__m512 ga[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
		const uint8_t* gb = wb + (size_t)g * gs / 2;
		const float* xg = xde + (size_t)g * gs;
#if HARK_Q4_PF > 0
		for (int c = 0; c < gs / 2; c += 64) _mm_prefetch((const char*)gb + c + HARK_Q4_PF, _MM_HINT_T0);
#endif
		for (int c = 0; c < gs; c += 32) {
			__m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)(gb + c / 2)));
			__m512 qe = _mm512_cvtepi32_ps(_mm512_and_si512(v, lo4));
			__m512 qo = _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4));
			for (int ii = 0; ii < NI; ii++) {
				const float* xr = xg + (size_t)ii * k + c;
				ga[ii] = _mm512_fmadd_ps(qe, _mm512_loadu_ps(xr), ga[ii]);
				ga[ii] = _mm512_fmadd_ps(qo, _mm512_loadu_ps(xr + 16), ga[ii]);
			}
		}
		__m512 sv = _mm512_set1_ps(sc[g]);
		for (int ii = 0; ii < NI; ii++) {
			acc[ii] = _mm512_fmadd_ps(sv, ga[ii], acc[ii]);
			bsum[ii] += bi[g] * xsum[(size_t)ii * gpr + g];
		}
	}
	for (int ii = 0; ii < NI; ii++) out[(size_t)ii * ldo] = _mm512_reduce_add_ps(acc[ii]) + bsum[ii];
}

AVX512 static void qmm_t_q4_avx512(const float* xde, const float* xsum, int m, const hark_qmat* q, int j0, int j1,
                                   float* out, int ldo) {
	const int k = q->cols, gs = q->gs, gpr = k / gs, wpr = k / 8;
	for (int j = j0; j < j1; j++) {
		const uint8_t* wb = (const uint8_t*)(q->w + (size_t)j * wpr);
		const float* sc = q->scales + (size_t)j * gpr;
		const float* bi = q->biases + (size_t)j * gpr;
		for (int i0 = 0; i0 < m; i0 += 4) {
			int ni = m - i0 < 4 ? m - i0 : 4;
			float* out_ = out + (size_t)i0 * ldo + j;
			DISPATCH_NI(q4_rows512, ni, wb, sc, bi, xde + (size_t)i0 * k, xsum + (size_t)i0 * gpr, k, gs)
		}
	}
}

int hark_q4_chunk(void) { return (hark_cpu_features() & HARK_CPU_AVX512F) ? 32 : 16; }

AVX2 static void qmm_t_avx2(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                            int j0, int j1, float* out, int ldo) {
	const int k = q->cols, gs = q->gs, gpr = k / gs, wpr = k * q->bits / 32;
	for (int j = j0; j < j1; j++) {
		const uint8_t* wb = (const uint8_t*)(q->w + (size_t)j * wpr);
		const float* sc = q->scales + (size_t)j * gpr;
		const float* bi = q->biases + (size_t)j * gpr;
		for (int i0 = 0; i0 < m; i0 += 4) {
			int ni = m - i0 < 4 ? m - i0 : 4;
			float* out_ = out + (size_t)i0 * ldo + j;
			const float* xs = xsum + (size_t)i0 * gpr;
			if (q->bits == 4) {
				DISPATCH_NI(q4_rows, ni, wb, sc, bi, xde + (size_t)i0 * k, xs, k, gs)
			} else {
				DISPATCH_NI(q8_rows, ni, wb, sc, bi, x + (size_t)i0 * k, xs, k, gs)
			}
		}
	}
}

int hark_qmm_t_simd(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                    int j0, int j1, float* out, int ldo, int no512) {
	if (!(hark_cpu_features() & HARK_CPU_AVX2_FMA)) return 0;
	if (q->bits != 4 && q->bits != 8) return 0;
	if (q->bits == 4 && xde == NULL) return 0;
	if (q->bits == 4 && !no512 && hark_q4_chunk() == 32) {
		qmm_t_q4_avx512(xde, xsum, m, q, j0, j1, out, ldo);
		return 1;
	}
	qmm_t_avx2(x, xde, xsum, m, q, j0, j1, out, ldo);
	return 1;
}

// dequant_avx2 expands 4- and 8-bit rows with a separate multiply and add
// (never an FMA) so the result is bit-identical to Dequantize. 4-bit codes
// come out even/odd split and are re-interleaved before the store.
AVX2 static void dequant_avx2(const hark_qmat* q, int r0, int r1, float* out) {
	const int cols = q->cols, gs = q->gs, gpr = cols / gs, wpr = cols * q->bits / 32;
	const __m256i lo4 = _mm256_set1_epi32(0xF);
	for (int r = r0; r < r1; r++) {
		const uint8_t* wb = (const uint8_t*)(q->w + (size_t)r * wpr);
		float* o = out + (size_t)(r - r0) * cols;
		for (int g = 0; g < gpr; g++) {
			__m256 s = _mm256_set1_ps(q->scales[(size_t)r * gpr + g]);
			__m256 b = _mm256_set1_ps(q->biases[(size_t)r * gpr + g]);
			int c0 = g * gs;
			if (q->bits == 4) {
				for (int c = c0; c < c0 + gs; c += 16) {
					__m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(wb + c / 2)));
					__m256 e = _mm256_add_ps(_mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_and_si256(v, lo4))), b);
					__m256 od = _mm256_add_ps(_mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4))), b);
					__m256 lo = _mm256_unpacklo_ps(e, od), hi = _mm256_unpackhi_ps(e, od);
					_mm256_storeu_ps(o + c, _mm256_permute2f128_ps(lo, hi, 0x20));
					_mm256_storeu_ps(o + c + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
				}
			} else {
				for (int c = c0; c < c0 + gs; c += 8) {
					__m256 qv = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(wb + c))));
					_mm256_storeu_ps(o + c, _mm256_add_ps(_mm256_mul_ps(s, qv), b));
				}
			}
		}
	}
}

int hark_dequant_simd(const hark_qmat* q, int r0, int r1, float* out) {
	if (!(hark_cpu_features() & HARK_CPU_AVX2_FMA)) return 0;
	if (q->bits != 4 && q->bits != 8) return 0;
	dequant_avx2(q, r0, r1, out);
	return 1;
}
