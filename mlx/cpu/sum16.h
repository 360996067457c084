// Transposing reductions for the AVX-512 decode kernels
// (attn_decode_amd64.c, quant_decode_attention_amd64.c): many vectors of
// partial sums in, one vector of their totals out, in about three
// operations per total instead of a horizontal sum each.
#ifndef HARK_SUM16_H
#define HARK_SUM16_H
#include <immintrin.h>

#define SUM16_ATI __attribute__((target("avx512f"), always_inline)) static inline

// sum16_tail reduces 8 vectors, each holding two groups of 8 partial sums
// (its low and high halves), to one vector of the 16 groups' totals, in
// the lane order that sum16 and sum8x2 undo: three rounds of shuffles and
// adds.
SUM16_ATI __m512 sum16_tail(__m512 b[8]) {
	__m512 c[4], d[2];
	for (int i = 0; i < 4; i++)
		c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88), _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xDD));
	for (int i = 0; i < 2; i++)
		d[i] = _mm512_add_ps(_mm512_unpacklo_ps(c[2 * i], c[2 * i + 1]), _mm512_unpackhi_ps(c[2 * i], c[2 * i + 1]));
	return _mm512_add_ps(_mm512_unpacklo_ps(d[0], d[1]), _mm512_unpackhi_ps(d[0], d[1]));
}

// sum16 returns the vector whose lane j is the sum of the 16 lanes of
// a[j]: halves added pairwise, then sum16_tail.
SUM16_ATI __m512 sum16(__m512 a[16]) {
	__m512 b[8];
	for (int i = 0; i < 8; i++)
		b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44), _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
	// lanes of the tail: key order 0 8 4 12 1 9 5 13 2 10 6 14 3 11 7 15
	const __m512i back = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15);
	return _mm512_permutexvar_ps(back, sum16_tail(b));
}

// sum8x2 is sum16 without its first round: b[h] holds head h's 8 partial
// sums of one key row in its low half and of the next row in its high
// half, and lane r*8 + h of the result is the total of row r for head h.
SUM16_ATI __m512 sum8x2(__m512 b[8]) {
	// The tail's lane L holds what sum16's lane L would for its input 2h + r.
	const __m512i back = _mm512_setr_epi32(0, 8, 2, 10, 1, 9, 3, 11, 4, 12, 6, 14, 5, 13, 7, 15);
	return _mm512_permutexvar_ps(back, sum16_tail(b));
}
#endif
