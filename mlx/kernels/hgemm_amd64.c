//go:build cgo

// Prefill GEMM for 16-bit float weights on AVX-512: C = A·Wᵀ with W a bf16
// or f16 matrix [n, k] read as stored. It is hark_sgemm_amd64's loop nest
// (the same blocking, A packing and 12x32 register tile, from
// sgemm_amd64.c) with one change: B's 32-column panels are packed straight
// from the 16-bit rows, widened as they are transposed. Before, each
// projection was first widened whole into a float32 tile (4 bytes written
// and read back per weight, a 20 MB buffer) and then packed from it one
// scalar at a time, column by column, as a transposed B. Widening is exact
// and the sums run in the same order, so results are bit for bit those of
// Sgemm on the widened W.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include "hmatmul.h"

#define HAVX512 __attribute__((target("avx512f,avx512bw,avx512vl,f16c")))

void hark_sgemm_pack_a512(const float* a, int lda, int i0, int mc, int p0, int kc, float* pa);
void hark_sgemm_tile512(int kc, const float* pa, const float* pb, float* c, int ldc, int mr, int nr, float beta);
void hark_sgemm_blocks(int* kc, int* mc, int* nc);

// transpose16f transposes 16 rows of 16 floats in place (unpacks within
// 128-bit lanes, then lane shuffles).
HAVX512 static inline void transpose16f(__m512 r[16]) {
	__m512 t[16], u[16];
#pragma GCC unroll 8
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
#pragma GCC unroll 4
	for (int g = 0; g < 16; g += 4) {
		u[g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[g]), _mm512_castps_pd(t[g + 2])));
		u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[g]), _mm512_castps_pd(t[g + 2])));
		u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[g + 1]), _mm512_castps_pd(t[g + 3])));
		u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[g + 1]), _mm512_castps_pd(t[g + 3])));
	}
#pragma GCC unroll 4
	for (int j = 0; j < 4; j++) {
		__m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
		__m512 w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88), w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
		r[j] = _mm512_shuffle_f32x4(v0, w0, 0x88);
		r[8 + j] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
		r[4 + j] = _mm512_shuffle_f32x4(v1, w1, 0x88);
		r[12 + j] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
	}
}

// widen16 loads up to 16 values (lanes in mask) of format kind at p as
// float32, zero elsewhere.
HAVX512 static inline __m512 widen16(const uint16_t* p, __mmask16 mask, int kind) {
	__m256i h = _mm256_maskz_loadu_epi16(mask, p);
	if (kind == HARK_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
	return _mm512_cvtph_ps(h);
}

// pack_bh packs rows [j0, j0+nc) and columns [p0, p0+kc) of W [n, k]
// (16-bit, format kind) as the 32-column panels of op(B) = Wᵀ that
// hark_sgemm_tile512 reads: panel jr, k step p holds W[j0+jr+c][p0+p] at
// c = 0..31, zero for rows past nc. Each 16x16 block of W is loaded a row
// at a time, widened and transposed in registers.
HAVX512 static void pack_bh(const uint16_t* w, int k, int kind, int p0, int kc, int j0, int nc, float* pb) {
	for (int jr = 0; jr < nc; jr += 32) {
		const int nr = nc - jr < 32 ? nc - jr : 32;
		for (int h = 0; h < 2; h++) {
			const int live = nr - 16 * h;
			float* out = pb + (size_t)jr * kc + 16 * h;
			const uint16_t* base = w + (size_t)(j0 + jr + 16 * h) * k + p0;
			for (int p = 0; p < kc; p += 16) {
				const int valid = kc - p < 16 ? kc - p : 16;
				const __mmask16 cols = valid >= 16 ? 0xFFFF : (__mmask16)((1u << valid) - 1);
				__m512 r[16];
				for (int c = 0; c < 16; c++)
					r[c] = c < live ? widen16(base + (size_t)c * k + p, cols, kind) : _mm512_setzero_ps();
				transpose16f(r);
				for (int i = 0; i < valid; i++) _mm512_storeu_ps(out + (size_t)(p + i) * 32, r[i]);
			}
		}
	}
}

// hark_hgemm_t_amd64 computes rows [i0, i1) and columns [j0, j1) of
// C = A·Wᵀ (row-major, beta 0; A [m, k] with lda floats per row, W the
// 16-bit [n, k] matrix w of format kind) with the caller's packing buffers
// (hark_sgemm_pack_a_len and hark_sgemm_pack_b_len floats).
HAVX512 void hark_hgemm_t_amd64(int i0, int i1, int j0, int j1, int k, const float* a, int lda, const uint16_t* w,
                                int kind, float* c, int ldc, float* pa, float* pb) {
	int KC, MC, NC;
	hark_sgemm_blocks(&KC, &MC, &NC);
	for (int jc = j0; jc < j1; jc += NC) {
		int nc = j1 - jc < NC ? j1 - jc : NC;
		for (int pc = 0; pc < k; pc += KC) {
			int kc = k - pc < KC ? k - pc : KC;
			float bt = pc == 0 ? 0.0f : 1.0f;
			pack_bh(w, k, kind, pc, kc, jc, nc, pb);
			for (int ic = i0; ic < i1; ic += MC) {
				int mc = i1 - ic < MC ? i1 - ic : MC;
				hark_sgemm_pack_a512(a, lda, ic, mc, pc, kc, pa);
				for (int jr = 0; jr < nc; jr += 32) {
					int nr = nc - jr < 32 ? nc - jr : 32;
					for (int ir = 0; ir < mc; ir += 12) {
						int mr = mc - ir < 12 ? mc - ir : 12;
						hark_sgemm_tile512(kc, pa + (size_t)ir * kc, pb + (size_t)jr * kc,
						                   c + (size_t)(ic + ir) * ldc + jc + jr, ldc, mr, nr, bt);
					}
				}
			}
		}
	}
}
