//go:build cgo

// A multi-row kernel for 4-bit matrices in the packed layout (qpacked.go)
// on AVX-512 VNNI CPUs without AMX: prefill chunks and batched decode.
//
// x is quantized per weight group to int8, as llama.cpp quantizes it for
// its Q4 × Q8 dot products: value v of group g is xi·d_g with
// d_g = max|x_g|/127, so each code byte meets one x byte in VPDPBUSD
// (unsigned nibble × signed byte). The decode kernel (qpacked_amd64.c)
// instead splits x into three bytes per value, exact but three times the
// arithmetic; at decode a core waits on memory, so that costs nothing,
// while prefill is bound by arithmetic.
//
// Each block of a tile's codes (4 rows × 128 values) is loaded, transposed
// and split into its nibbles once and used for up to PQ8_MI rows of x
// (one accumulator each), so per row of x and block that leaves eight
// VPDPBUSDs, one add, one multiply for the joint scales, one conversion
// and one FMA for all 4 weight rows.
// Tiles run in chunks of PQ8_NT (their bytes then stay in L2 while every
// block of x rows passes over them).
//
// The affine bias term, bias_g · Σx_g, uses the float sum of x, so only
// the scale term carries the rounding of x to int8.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "qmatmul.h"

#define PQ8_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,gfni,fma"
#define PQ8_INLINE __attribute__((target(PQ8_TARGET), always_inline)) static inline

#ifndef PQ8_MI
#define PQ8_MI 8
#endif
#ifndef PQ8_NT
#define PQ8_NT 16
#endif
#ifndef PQ8_KS
#define PQ8_KS 512
#endif
#ifndef PQ8_XBYTES
#define PQ8_XBYTES (1 << 20)
#endif

// Groups whose largest |x| is below this quantize to zero: 127/max|x|
// would overflow float32 near the subnormals.
#define PQ8_TINY 1e-30f

// hark_pq8_prep quantizes m rows of x ([m, k], groups of gs) for
// hark_pq8. Per row and block of 128 values, xq holds 512 bytes: the 64
// even-indexed values (the low nibbles' partners) and then the 64 odd ones,
// each as 4 vectors, vector c holding dword c of every 128-bit lane
// broadcast across that lane (pq8_tile says why). xsv holds 16 floats per
// block, each lane's d_g (lanes 0-7 cover values 0-63 of the block, 8-15
// values 64-127); xsum holds the float sum of each group. It returns 0
// when x holds an infinity or NaN, which the int8 form cannot carry.
__attribute__((target(PQ8_TARGET))) int hark_pq8_prep(const float* x, int m, int k, int gs, int8_t* xq,
                                                      float* xsv, float* xsum) {
	const int gpr = k / gs;
	const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
	__mmask16 bad = 0;
	int8_t qr[k]; // one row in the compact order, expanded below
	for (int i = 0; i < m; i++) {
		const float* xr = x + (size_t)i * k;
		float* sr = xsv + (size_t)i * (k / 8);
		for (int g = 0; g < gpr; g++) {
			const float* xg = xr + (size_t)g * gs;
			__m512 mx = _mm512_setzero_ps(), sm = _mm512_setzero_ps();
			for (int v = 0; v < gs; v += 16) {
				const __m512 a = _mm512_loadu_ps(xg + v);
				// x - x is NaN exactly where x is an infinity or NaN.
				const __m512 z = _mm512_sub_ps(a, a);
				bad |= _mm512_cmp_ps_mask(z, z, _CMP_UNORD_Q);
				mx = _mm512_max_ps(mx, _mm512_abs_ps(a));
				sm = _mm512_add_ps(sm, a);
			}
			const float amax = _mm512_reduce_max_ps(mx);
			xsum[(size_t)i * gpr + g] = _mm512_reduce_add_ps(sm);
			const float d = amax >= PQ8_TINY ? amax / 127.0f : 0.0f;
			const __m512 inv = _mm512_set1_ps(amax >= PQ8_TINY ? 127.0f / amax : 0.0f);
			const int v0 = g * gs;
			for (int v = v0; v < v0 + gs; v += 32) {
				const __m512 a = _mm512_loadu_ps(xr + v), b = _mm512_loadu_ps(xr + v + 16);
				const __m512 e = _mm512_permutex2var_ps(a, ie, b), o = _mm512_permutex2var_ps(a, io, b);
				int8_t* q = qr + (v / 128) * 128 + (v % 128) / 2;
				_mm_storeu_si128((__m128i*)q, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(e, inv))));
				_mm_storeu_si128((__m128i*)(q + 64), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(o, inv))));
			}
			// The group's lanes of its block's scale vector.
			float* s = sr + (v0 / 128) * 16;
			if (gs == 64) {
				for (int t = 0; t < 8; t++) s[(g % 2) * 8 + t] = d;
			} else {
				for (int t = 0; t < 16; t++) s[t] = d;
			}
		}
		// Per block, dword c of each 128-bit lane of the even and odd
		// halves, broadcast across its lane: the order the transposed
		// codes meet them in (pq8_tile).
		for (int l = 0; l < k / 128; l++) {
			const __m512i e = _mm512_loadu_si512(qr + l * 128), o = _mm512_loadu_si512(qr + l * 128 + 64);
			int8_t* q = xq + (size_t)i * k * 4 + (size_t)l * 512;
			_mm512_storeu_si512(q, _mm512_shuffle_epi32(e, 0x00));
			_mm512_storeu_si512(q + 64, _mm512_shuffle_epi32(e, 0x55));
			_mm512_storeu_si512(q + 128, _mm512_shuffle_epi32(e, 0xAA));
			_mm512_storeu_si512(q + 192, _mm512_shuffle_epi32(e, 0xFF));
			_mm512_storeu_si512(q + 256, _mm512_shuffle_epi32(o, 0x00));
			_mm512_storeu_si512(q + 320, _mm512_shuffle_epi32(o, 0x55));
			_mm512_storeu_si512(q + 384, _mm512_shuffle_epi32(o, 0xAA));
			_mm512_storeu_si512(q + 448, _mm512_shuffle_epi32(o, 0xFF));
		}
	}
	return bad == 0;
}

// pq8_tile computes NI rows of x (rows apart by 4k bytes of xq) against
// the `rows` valid rows of one tile. GS64 selects groups of 64 over 128.
//
// The tile's 4 code rows of a block are transposed by dwords within each
// 128-bit lane, so dword r of lane L of vector c holds row r's dword
// 4L+c: one VPDPBUSD then serves all 4 rows, against x's dword 4L+c
// broadcast across the lane (as hark_pq8_prep stores it), and one
// accumulator a row of x gathers all 4 rows, whose scales, conversion and
// FMA are paid once for the 4.
PQ8_INLINE void pq8_tile(const uint8_t* tp, int k, const int8_t* xq, const float* xsv, const float* xsum,
                         const int NI, const int GS64, int gb, int ge, int add, int rows, float* out, int ldo) {
	const int gs = GS64 ? 64 : 128, gpr = k / gs, svr = k / 8;
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	// Bit matrix of a right shift by 4 within each byte.
	const __m512i shr4 = _mm512_set1_epi64(0x1020408000000000LL);
	// Lane L, dword r: meta scale [r][g] of the group of values 32L..32L+31.
	const __m512i six4 = _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 1, 3, 5, 7, 1, 3, 5, 7);
	const __m512i six128 = _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6);
	__m512 acc[PQ8_MI];
	__m256 bacc[PQ8_MI];
	for (int i = 0; i < NI; i++) {
		bacc[i] = _mm256_setzero_ps();
		acc[i] = _mm512_setzero_ps();
	}
	// Groups [gb, ge), gb even: the superblocks before it are whole.
	const uint8_t* bp = tp + (size_t)(gb / 2) * ((GS64 ? 256 : 512) + 64);
	for (int g0 = gb; g0 < ge; g0 += 2) {
		const int ng = gpr - g0 < 2 ? 1 : 2;
		const int nbk = GS64 ? 1 : ng;
		const float* meta = (const float*)(bp + nbk * 256);
		const __m256 ms = _mm256_loadu_ps(meta), mb = _mm256_loadu_ps(meta + 8);
		for (int i = 0; i < NI; i++) {
			// The bias term: biases[row][g] * sum of x over group g.
			const float* xs = xsum + (size_t)i * gpr + g0;
			__m256 xsm = ng == 2 ? _mm256_castpd_ps(_mm256_broadcast_sd((const double*)xs))
			                     : _mm256_maskz_mov_ps(0x55, _mm256_set1_ps(xs[0]));
			bacc[i] = _mm256_fmadd_ps(mb, xsm, bacc[i]);
		}
		for (int b = 0; b < nbk; b++) {
			const int l = (g0 * gs) / 128 + b;
			const uint8_t* cb = bp + b * 256;
			const __m512i r0 = _mm512_loadu_si512(cb), r1 = _mm512_loadu_si512(cb + 64);
			const __m512i r2 = _mm512_loadu_si512(cb + 128), r3 = _mm512_loadu_si512(cb + 192);
			const __m512i t0 = _mm512_unpacklo_epi32(r0, r1), t1 = _mm512_unpackhi_epi32(r0, r1);
			const __m512i t2 = _mm512_unpacklo_epi32(r2, r3), t3 = _mm512_unpackhi_epi32(r2, r3);
			const __m512i v[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
			                      _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
			__m512i lo[4], hi[4];
			for (int c = 0; c < 4; c++) {
				lo[c] = _mm512_and_si512(v[c], m4);
				hi[c] = _mm512_gf2p8affine_epi64_epi8(v[c], shr4, 0);
			}
			const __m512 wsv = GS64 ? _mm512_permutexvar_ps(six4, _mm512_castps256_ps512(ms))
			                        : _mm512_permutexvar_ps(_mm512_add_epi32(six128, _mm512_set1_epi32(b)),
			                                                _mm512_castps256_ps512(ms));
			for (int i = 0; i < NI; i++) {
				const int8_t* d = xq + (size_t)i * k * 4 + (size_t)l * 512;
				// Per lane at most 4 · 4 · 15 · 127 in each: no overflow.
				__m512i se = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[0], _mm512_loadu_si512(d));
				__m512i so = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi[0], _mm512_loadu_si512(d + 256));
				for (int c = 1; c < 4; c++) {
					se = _mm512_dpbusd_epi32(se, lo[c], _mm512_loadu_si512(d + 64 * c));
					so = _mm512_dpbusd_epi32(so, hi[c], _mm512_loadu_si512(d + 256 + 64 * c));
				}
				const __m512 ws = _mm512_mul_ps(wsv, _mm512_loadu_ps(xsv + (size_t)i * svr + (size_t)l * 16));
				acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(se, so)), ws, acc[i]);
			}
		}
		bp += nbk * 256 + 64;
	}
	const __mmask8 keep = (__mmask8)((1u << rows) - 1);
	for (int i = 0; i < NI; i++) {
		// bacc holds [row][group]: add each row's two groups; acc holds
		// row r in dword r of every 128-bit lane.
		const __m128 bias = _mm_hadd_ps(_mm256_castps256_ps128(bacc[i]), _mm256_extractf128_ps(bacc[i], 1));
		const __m256 t = _mm256_add_ps(_mm512_castps512_ps256(acc[i]),
		                               _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[i]), 1)));
		__m128 v = _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1)), bias);
		if (add) v = _mm_add_ps(v, _mm_maskz_loadu_ps(keep, out + (size_t)i * ldo));
		_mm_mask_storeu_ps(out + (size_t)i * ldo, keep, v);
	}
}

// pq8_rows runs one tile against ni (1..PQ8_MI) rows of x.
PQ8_INLINE void pq8_rows(const uint8_t* tp, int k, int gs, const int8_t* xq, const float* xsv, const float* xsum,
                         int ni, int gb, int ge, int add, int rows, float* out, int ldo) {
#define PQ8_CASE(n)                                                                          \
	case n:                                                                                  \
		if (gs == 64) pq8_tile(tp, k, xq, xsv, xsum, n, 1, gb, ge, add, rows, out, ldo);     \
		else pq8_tile(tp, k, xq, xsv, xsum, n, 0, gb, ge, add, rows, out, ldo);              \
		break;
	switch (ni) {
		PQ8_CASE(1)
		PQ8_CASE(2)
		PQ8_CASE(3)
#if PQ8_MI >= 4
		PQ8_CASE(4)
#endif
#if PQ8_MI >= 5
		PQ8_CASE(5)
#endif
#if PQ8_MI >= 6
		PQ8_CASE(6)
#endif
#if PQ8_MI >= 8
		PQ8_CASE(7)
		PQ8_CASE(8)
#endif
	}
#undef PQ8_CASE
}

// hark_pq8 runs tiles [t0, t1) against all m rows of x prepared by
// hark_pq8_prep, writing out [m, n] (row stride ldo).
__attribute__((target(PQ8_TARGET))) void hark_pq8(const int8_t* xq, const float* xsv, const float* xsum, int m,
                                                  const uint8_t* p, int k, int gs, int n, int t0, int t1,
                                                  float* out, int ldo) {
	const size_t tb = hark_pq4_tile_bytes(k, gs);
	const int gpr = k / gs;
	// Rows of x in chunks of about PQ8_XBYTES (4k bytes and k/2 of scales
	// a row): each chunk streams this worker's tiles once more, so chunks
	// are large (the 0.5B model's prefill512 in 256 KB chunks spent as
	// much CPU as dequantizing into Sgemm, re-reading the weights from
	// memory every 8 rows at k = 4864), while a chunk of PQ8_NT tiles stays
	// in L2 as the rows pass over it.
	// Each block of x rows meets the chunk's tiles PQ8_KS values of a row
	// at a time, so its slice (PQ8_MI rows of 4·PQ8_KS bytes) stays in L1
	// while the tiles pass: whole rows of 8 at k = 4864 are 155 KB, which
	// every tile re-read from L2, and the down projection ran at 70% of
	// the gate/up one's rate. Slices are whole superblocks (2 groups).
	const int gps = PQ8_KS / gs;
	int mc = PQ8_XBYTES / (4 * k + k / 2) / PQ8_MI * PQ8_MI;
	if (mc < PQ8_MI) mc = PQ8_MI;
	for (int m0 = 0; m0 < m; m0 += mc) {
	const int m1 = m - m0 < mc ? m : m0 + mc;
	for (int c0 = t0; c0 < t1; c0 += PQ8_NT) {
		const int c1 = t1 - c0 < PQ8_NT ? t1 : c0 + PQ8_NT;
		for (int gb = 0; gb < gpr; gb += gps) {
		const int ge = gpr - gb < gps ? gpr : gb + gps;
		for (int i0 = m0; i0 < m1; i0 += PQ8_MI) {
			const int ni = m1 - i0 < PQ8_MI ? m1 - i0 : PQ8_MI;
			const int8_t* d = xq + (size_t)i0 * k * 4;
			const float* sv = xsv + (size_t)i0 * (k / 8);
			const float* xs = xsum + (size_t)i0 * gpr;
			for (int t = c0; t < c1; t++) {
				const int rows = n - 4 * t < 4 ? n - 4 * t : 4;
				pq8_rows(p + (size_t)t * tb, k, gs, d, sv, xs, ni, gb, ge, gb > 0, rows, out + (size_t)i0 * ldo + 4 * t, ldo);
			}
		}
		}
	}
	}
}
