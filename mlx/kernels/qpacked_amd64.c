//go:build cgo

// The decode kernel for 4-bit matrices in the packed layout (qpacked.go),
// on AVX-512 VNNI, and the dequantizer prefill and embedding lookups use
// on the same layout.
//
// Why a layout of its own: at decode a core is limited by how many weight
// cache lines it keeps in flight, not by arithmetic. The MLX layout makes
// a kernel read three streams (codes, scales, biases), and any kernel that
// takes several rows at once to share its loads of x reads several more;
// the hardware prefetchers then keep fewer lines coming. In the packed
// layout each tile of 4 rows is one contiguous run in exactly the order
// the kernel reads it, so every core streams a single sequence. In a C
// replay of a 0.5B model's decode matmuls on the 2-core EPYC test machine,
// that took the integer kernel from about 74% to about 94% of a plain read
// of the same bytes.
//
// The arithmetic is that of qmatmul_i24_amd64.c (x as three signed 8-bit
// digits per value, exact integer dot products with VPDPBUSD), done for 4
// weight rows per load of x: per 64 code bytes a row costs six VPDPBUSDs,
// the nibble split (one GF2P8AFFINEQB shifts the high nibbles down), one
// permute for its scales and one FMA. CPUs with VNNI but no GFNI (Cascade
// Lake) keep the MLX layout and the kernel of qmatmul_i24_amd64.c.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "qmatmul.h"

// The dequantizer must round scale*q before adding the bias, as MLX does;
// keep GCC from contracting the separate multiply and add into an FMA.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

// HARK_PQ4_PF is how far ahead (bytes) the kernel asks for the weights it
// will read, and it asks non-temporally, so that lines read once per token
// need not displace the KV caches, activations and norm weights the small
// ops between the matmuls read next (each matmul streams megabytes). In
// same-process A/B windows of 0.5B q4 decode on the EPYC test machine,
// the non-temporal hint gained about 4%, and 8 KB ahead about 6% over 4 KB
// (2 KB lost 6%, 16 KB was no better).
#ifndef HARK_PQ4_PF
#define HARK_PQ4_PF 8192
#endif

#define PQ_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,gfni,fma"
#define PQ_INLINE __attribute__((target(PQ_TARGET), always_inline)) static inline

int hark_pq4_ok(int k, int gs) {
	return hark_q4i24_ok(k, gs) && (hark_cpu_features() & HARK_CPU_AVX512VL) &&
	       (hark_cpu_features() & HARK_CPU_GFNI) && (gs == 64 || gs == 128);
}

// Byte offsets inside a tile: superblock s (groups 2s and 2s+1 of every
// row) starts at s*(2*gs*2 + 64) and holds gs/64 code blocks of 256 bytes
// (4 rows × 64) and then 64 bytes of meta: scales[row][2], biases[row][2].
// A last superblock with one group holds gs/128 code blocks.
size_t hark_pq4_tile_bytes(int k, int gs) {
	return (size_t)(k / 128) * 256 + (size_t)((k / gs + 1) / 2) * 64;
}

// pq_tile computes NI (1 or 2) rows of x against the `rows` valid rows of
// one tile. GS64 selects group size 64 (two groups per code block) over
// 128 (one group per block).
PQ_INLINE void pq_tile(const uint8_t* tp, int k, const int8_t* xd, const float* xsv, const float* xsum,
                       const int NI, const int GS64, int rows, float* out, int ldo) {
	const int gs = GS64 ? 64 : 128, nb = k / 128, gpr = k / gs;
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	// Bit matrix of a right shift by 4 within each byte.
	const __m512i shr4 = _mm512_set1_epi64(0x1020408000000000LL);
	// Lanes 0-7 of a block's dot products are values 0-63, lanes 8-15
	// values 64-127: with groups of 64, row j's scales sit at meta[2j]
	// and meta[2j+1].
	const __m512i half = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
	__m512 acc[2][4];
	__m256 bacc[2];
	for (int i = 0; i < NI; i++) {
		bacc[i] = _mm256_setzero_ps();
		for (int j = 0; j < 4; j++) acc[i][j] = _mm512_setzero_ps();
	}
	const uint8_t* bp = tp;
	for (int g0 = 0; g0 < gpr; g0 += 2) {
		const int ng = gpr - g0 < 2 ? 1 : 2;
		const int nbk = GS64 ? 1 : ng;
		const float* meta = (const float*)(bp + nbk * 256);
#if HARK_PQ4_PF > 0
		for (int z = 0; z < nbk * 256 + 64; z += 64) _mm_prefetch((const char*)bp + HARK_PQ4_PF + z, _MM_HINT_NTA);
#endif
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
			__m512i xv[2][6];
			__m512 sc[2];
			for (int i = 0; i < NI; i++) {
				const int8_t* d = xd + ((size_t)i * nb + l) * 384;
				for (int t = 0; t < 6; t++) xv[i][t] = _mm512_loadu_si512(d + 64 * t);
				const float* sv = xsv + ((size_t)i * nb + l) * 16;
				if (GS64) {
					// meta scales times x's lane scale of the matching half.
					const __m256 xp = _mm256_unpacklo_ps(_mm256_set1_ps(sv[0]), _mm256_set1_ps(sv[8]));
					sc[i] = _mm512_castps256_ps512(_mm256_mul_ps(ms, xp));
				} else {
					sc[i] = _mm512_loadu_ps(sv);
				}
			}
#pragma GCC unroll 4
			for (int j = 0; j < 4; j++) {
				const __m512i w = _mm512_loadu_si512(cb + j * 64);
				const __m512i lo = _mm512_and_si512(w, m4);
				const __m512i hi = _mm512_gf2p8affine_epi64_epi8(w, shr4, 0);
				__m512 ws1 = _mm512_setzero_ps();
				if (!GS64) ws1 = _mm512_permutexvar_ps(_mm512_set1_epi32(2 * j + b), _mm512_castps256_ps512(ms));
				for (int i = 0; i < NI; i++) {
					// a·2^16 + b·2^8 + c, accumulated through the
					// VPDPBUSD inputs: per lane |a| <= 8·15·128, so the
					// sum stays below 2^31.
					__m512i a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, xv[i][0]);
					a = _mm512_dpbusd_epi32(a, hi, xv[i][1]);
					__m512i bq = _mm512_dpbusd_epi32(_mm512_slli_epi32(a, 8), lo, xv[i][2]);
					bq = _mm512_dpbusd_epi32(bq, hi, xv[i][3]);
					__m512i c = _mm512_dpbusd_epi32(_mm512_slli_epi32(bq, 8), lo, xv[i][4]);
					c = _mm512_dpbusd_epi32(c, hi, xv[i][5]);
					const __m512 ws = GS64 ? _mm512_permutexvar_ps(_mm512_add_epi32(half, _mm512_set1_epi32(2 * j)), sc[i])
					                       : _mm512_mul_ps(ws1, sc[i]);
					acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(c), ws, acc[i][j]);
				}
			}
		}
		bp += nbk * 256 + 64;
	}
	for (int i = 0; i < NI; i++) {
		float bb[8];
		_mm256_storeu_ps(bb, bacc[i]);
		for (int j = 0; j < rows; j++)
			out[(size_t)i * ldo + j] = _mm512_reduce_add_ps(acc[i][j]) + (bb[2 * j] + bb[2 * j + 1]);
	}
}

// hark_pq4 runs tiles [t0, t1), each against the rows of x in pairs (the
// tile's bytes then come from L1 after the first pair).
__attribute__((target(PQ_TARGET))) void hark_pq4(const int8_t* xd, const float* xsv, const float* xsum, int m,
                                                 const uint8_t* p, int k, int gs, int n, int t0, int t1,
                                                 float* out, int ldo) {
	const size_t tb = hark_pq4_tile_bytes(k, gs);
	const int gpr = k / gs;
	for (int t = t0; t < t1; t++) {
		const uint8_t* tp = p + (size_t)t * tb;
		const int rows = n - 4 * t < 4 ? n - 4 * t : 4;
		for (int i0 = 0; i0 < m; i0 += 2) {
			const int8_t* d = xd + (size_t)i0 * k * 3;
			const float* sv = xsv + (size_t)i0 * k / 8;
			const float* xs = xsum + (size_t)i0 * gpr;
			float* o = out + (size_t)i0 * ldo + 4 * t;
			const int two = m - i0 >= 2;
			if (gs == 64) {
				if (two) pq_tile(tp, k, d, sv, xs, 2, 1, rows, o, ldo);
				else pq_tile(tp, k, d, sv, xs, 1, 1, rows, o, ldo);
			} else {
				if (two) pq_tile(tp, k, d, sv, xs, 2, 0, rows, o, ldo);
				else pq_tile(tp, k, d, sv, xs, 1, 0, rows, o, ldo);
			}
		}
	}
}

// hark_pq4_dequant writes rows [r0, r1) as float32, each value
// float32(scale*q) + bias like MLX. Per code block it restores the value
// order of the 64 bytes (low nibble = even value) with byte unpacks, then
// widens 16 values at a time.
__attribute__((target(PQ_TARGET))) void hark_pq4_dequant(const uint8_t* p, int k, int gs, int r0, int r1, float* out) {
	const size_t tb = hark_pq4_tile_bytes(k, gs);
	const int gpr = k / gs;
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	for (int r = r0; r < r1; r++) {
		const uint8_t* bp = p + (size_t)(r / 4) * tb;
		const int j = r % 4;
		float* o = out + (size_t)(r - r0) * k;
		for (int g0 = 0; g0 < gpr; g0 += 2) {
			const int ng = gpr - g0 < 2 ? 1 : 2, nbk = gs == 64 ? 1 : ng;
			const float* meta = (const float*)(bp + nbk * 256);
			for (int b = 0; b < nbk; b++) {
				const int l = (g0 * gs) / 128 + b;
				const __m512i w = _mm512_loadu_si512(bp + b * 256 + j * 64);
				const __m512i lo = _mm512_and_si512(w, m4), hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
				// u[0] holds values 0-15, 32-47, 64-79, 96-111 of the block
				// (one 128-bit lane each), u[1] the 16 values after each.
				const __m512i u[2] = {_mm512_unpacklo_epi8(lo, hi), _mm512_unpackhi_epi8(lo, hi)};
				for (int c = 0; c < 8; c++) {
					const int v = c * 16; // first value of this chunk within the block
					const int g = (l * 128 + v) / gs - g0;
					const __m512 s = _mm512_set1_ps(meta[2 * j + g]), bi = _mm512_set1_ps(meta[8 + 2 * j + g]);
					__m128i q8;
					switch (c) {
					case 0: q8 = _mm512_extracti32x4_epi32(u[0], 0); break;
					case 1: q8 = _mm512_extracti32x4_epi32(u[1], 0); break;
					case 2: q8 = _mm512_extracti32x4_epi32(u[0], 1); break;
					case 3: q8 = _mm512_extracti32x4_epi32(u[1], 1); break;
					case 4: q8 = _mm512_extracti32x4_epi32(u[0], 2); break;
					case 5: q8 = _mm512_extracti32x4_epi32(u[1], 2); break;
					case 6: q8 = _mm512_extracti32x4_epi32(u[0], 3); break;
					default: q8 = _mm512_extracti32x4_epi32(u[1], 3); break;
					}
					const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q8));
					_mm512_storeu_ps(o + (size_t)l * 128 + v, _mm512_add_ps(_mm512_mul_ps(s, q), bi));
				}
			}
			bp += nbk * 256 + 64;
		}
	}
}
