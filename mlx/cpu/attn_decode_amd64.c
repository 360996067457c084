//go:build cgo

// Single-query attention for the heads that share one key/value head
// (decode), in AVX-512: hark_attn_decode of attn_rows.c for head sizes that
// are a multiple of 16 and key and value rows stored contiguously (a KV
// cache). Scores take 16 keys at a time per head with one transposing
// reduction (attn_d), or two keys at a time for all heads (attn_p), over
// blocks of 128 keys that every head reads while they are in L1/L2; the
// softmax is vectorised with a polynomial exp; the values are
// summed for several heads per pass over them. About twice as fast as the
// generic kernel for a 0.5B model's 7 heads per KV head. The sums run in
// another order than the generic kernel's, so results agree with it within
// float32 rounding, not bit for bit.

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include "sum16.h"

#define AT __attribute__((target("avx512f,fma")))
#define ATI __attribute__((target("avx512f,fma"), always_inline)) static inline

int hark_attn512_ok(void) {
	static volatile int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		cached = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
	}
	return cached;
}

// exp16 is expf_poly (fast_rows.c) for 16 floats: the same range
// reduction and polynomial, 2^n applied with VSCALEFPS.
ATI __m512 exp16(__m512 x) {
	const __m512 log2e = _mm512_set1_ps(1.44269504088896341f), ln2hi = _mm512_set1_ps(0.693359375f), ln2lo = _mm512_set1_ps(-2.12194440e-4f);
	x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.7f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_sub_ps(_mm512_sub_ps(x, _mm512_mul_ps(n, ln2hi)), _mm512_mul_ps(n, ln2lo));
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	__m512 e = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(e, n);
}

// ld16 loads 16 values at element i of a float32 row, or of an IEEE f16
// row widened with VCVTPH2PS (exact): a 16-bit KV cache reads half the
// bytes and converts them in registers. half is a constant where inlined,
// so each kernel keeps one kind of load.
ATI __m512 ld16(const void *p, size_t i, const int half) {
	if (half) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const unsigned short *)p + i)));
	return _mm512_loadu_ps((const float *)p + i);
}

// fetch asks for up to count lines from [*p, end) into L2, moves *p past
// them and returns how many of count are left.
ATI int fetch(const char **p, const char *end, int count) {
	for (; count > 0 && *p < end; count--, *p += 64) _mm_prefetch(*p, _MM_HINT_T1);
	return count;
}

// values_acc adds sum_j p[h*hs + j*js] * v[j] (j < n) to o[h] for nh
// heads (nh*d/16 at most 28 accumulators); inlined with nh constant for
// whole chunks. Per value row it fetches up to per lines from [*pf, pfEnd)
// (attn_d: the next block's values).
ATI void values_acc(const float *p, const int hs, const int js, const void *v, int n, const int d, const int nh, float *o,
                    const int half, const char **pf, const char *pfEnd, int per) {
	const int nc = d / 16;
	__m512 acc[28];
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) acc[hh * nc + c] = _mm512_loadu_ps(o + (size_t)hh * d + 16 * c);
	for (int j = 0; j < n; j++) {
		fetch(pf, pfEnd, per);
#pragma GCC unroll 8
		for (int c = 0; c < nc; c++) {
			const __m512 vv = ld16(v, (size_t)j * d + 16 * c, half);
#pragma GCC unroll 16
			for (int hh = 0; hh < nh; hh++) acc[hh * nc + c] = _mm512_fmadd_ps(_mm512_set1_ps(p[(size_t)hh * hs + (size_t)j * js]), vv, acc[hh * nc + c]);
		}
	}
	for (int hh = 0; hh < nh; hh++)
		for (int c = 0; c < nc; c++) _mm512_storeu_ps(o + (size_t)hh * d + 16 * c, acc[hh * nc + c]);
}

// softmax_row is the softmax of a row of n scores in place; 1 (the row
// untouched) when it holds a NaN or +Inf or is all -Inf. With inv, the
// row is left as exp(s - max) and *inv gets 1/Σ, for a caller that
// scales its sums instead (one pass over the row less).
ATI int softmax_row(float *sh, int n, float *lse, float *inv) {
	// Softmax of the row; a NaN, +Inf or all -Inf row is left to the
	// caller's per-row path, as in hark_attn_decode.
	__m512 mx = _mm512_set1_ps(-INFINITY);
	__mmask16 bad = 0;
	int j = 0;
	for (; j + 16 <= n; j += 16) {
		__m512 x = _mm512_loadu_ps(sh + j);
		bad |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); // +Inf shows in the max
		mx = _mm512_max_ps(mx, x);
	}
	if (j < n) {
		__mmask16 mk = (__mmask16)((1u << (n - j)) - 1);
		__m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), mk, sh + j);
		bad |= _mm512_mask_cmp_ps_mask(mk, x, x, _CMP_UNORD_Q);
		mx = _mm512_max_ps(mx, x);
	}
	const float m = _mm512_reduce_max_ps(mx);
	if (bad || m == -INFINITY || m == INFINITY) return 1;
	const __m512 mv = _mm512_set1_ps(m);
	__m512 sum = _mm512_setzero_ps();
	for (j = 0; j + 16 <= n; j += 16) {
		__m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(sh + j), mv));
		_mm512_storeu_ps(sh + j, e);
		sum = _mm512_add_ps(sum, e);
	}
	if (j < n) {
		__mmask16 mk = (__mmask16)((1u << (n - j)) - 1);
		__m512 e = _mm512_maskz_mov_ps(mk, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, sh + j), mv)));
		_mm512_mask_storeu_ps(sh + j, mk, e);
		sum = _mm512_add_ps(sum, e);
	}
	const float total = _mm512_reduce_add_ps(sum);
	if (lse) *lse = m + logf(total);
	if (inv) {
		*inv = 1.0f / total;
		return 0;
	}
	const __m512 iv = _mm512_set1_ps(1.0f / total);
	for (j = 0; j + 16 <= n; j += 16) _mm512_storeu_ps(sh + j, _mm512_mul_ps(_mm512_loadu_ps(sh + j), iv));
	if (j < n) {
		__mmask16 mk = (__mmask16)((1u << (n - j)) - 1);
		_mm512_mask_storeu_ps(sh + j, mk, _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, sh + j), iv));
	}
	return 0;
}

// hark_softmax512 is softmax_row for the quantized decode kernels
// (quant_decode_attention.go).
AT int hark_softmax512(float *s, int n) { return softmax_row(s, n, NULL, NULL); }

// hark_softmax512_lse is hark_softmax512 that also sets *lse to the row's
// log-sum-exp (for merging ranges of keys: quant_decode_attention.go).
AT int hark_softmax512_lse(float *s, int n, float *lse) { return softmax_row(s, n, lse, NULL); }

// hark_softmax512_exp is hark_softmax512_lse that leaves the row
// unnormalized and sets *inv to 1/Σ (softmax_row).
AT int hark_softmax512_exp(float *s, int n, float *lse, float *inv) { return softmax_row(s, n, lse, inv); }

// block is how many keys attn_d takes per pass: their keys and values
// (64 KB at d = 64) stay in L2 while every head uses them.
#define BLOCK 128

// block_softmax turns a block's n scores of one head into exp(s - m) for
// the running maximum *m, rescaling the head's output row o (d) and
// running sum *l when the maximum grows: the online softmax. 1 when the
// block holds a NaN or +Inf (the caller's per-row path decides those).
ATI int block_softmax(float *sh, int n, float *m, float *l, float *o, const int d) {
	__m512 mx = _mm512_set1_ps(-INFINITY);
	__mmask16 bad = 0;
	for (int j = 0; j < n; j += 16) {
		__mmask16 mk = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
		__m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), mk, sh + j);
		bad |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(x, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
		mx = _mm512_max_ps(mx, x);
	}
	if (bad) return 1;
	const float bm = _mm512_reduce_max_ps(mx), mnew = bm > *m ? bm : *m;
	if (mnew == -INFINITY) {
		// Every key so far masked out: nothing to add yet.
		for (int j = 0; j < n; j++) sh[j] = 0;
		return 0;
	}
	if (mnew > *m) {
		const float a = *m == -INFINITY ? 0.0f : expf(*m - mnew);
		const __m512 av = _mm512_set1_ps(a);
		for (int c = 0; c < d; c += 16) _mm512_storeu_ps(o + c, _mm512_mul_ps(_mm512_loadu_ps(o + c), av));
		*l *= a;
		*m = mnew;
	}
	const __m512 mv = _mm512_set1_ps(mnew);
	__m512 sum = _mm512_setzero_ps();
	for (int j = 0; j < n; j += 16) {
		__mmask16 mk = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
		__m512 e = _mm512_maskz_mov_ps(mk, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, sh + j), mv)));
		_mm512_mask_storeu_ps(sh + j, mk, e);
		sum = _mm512_add_ps(sum, e);
	}
	*l += _mm512_reduce_add_ps(sum);
	return 0;
}

// attn_d is hark_attn_decode512 for a head size d the caller makes a
// constant where it can, so the loops over d unroll with the accumulators
// in registers. One pass over the keys and values, in blocks of BLOCK
// (flash attention's online softmax): a block's scores for every head,
// their exps against a running maximum, then the block's values summed
// for several heads at a time while the block is still in cache. A long
// context (4096 keys: 2 MB of keys and values per KV head) is then read
// from memory once, not once for the scores and again per chunk of heads
// for the values after it has left L2.
ATI int attn_d(const float *q, int g, const void *k, const void *v, int n, const int d, float scale, float *s, float *o,
                float *lse, int more, const int half) {
	const __m512 sc = _mm512_set1_ps(scale);
	const int sb = n < BLOCK ? n : BLOCK; // s holds g rows of sb
	// hpc: heads per pass over a block's values, as many as leave their
	// accumulators (at most 28) and the loads within AVX-512's 32
	// registers. All 7 heads of a 0.5B model's kv head in one pass
	// instead of 4 + 3 halves the values' loads (and an f16 cache's
	// widenings): same process at 4,096 positions, f16 54.8 -> 59.9 and
	// 49.4 -> 52.4 tok/s, float32 48.6 -> 52.4. Each head sums in the
	// same order as before, so results are unchanged.
	const int nc = d / 16, hpc = nc >= 28 ? 1 : 28 / nc;
	float m[g], l[g];
	for (int h = 0; h < g; h++) m[h] = -INFINITY, l[h] = 0;
	for (size_t i = 0; i < (size_t)g * d; i++) o[i] = 0;
	const size_t es = half ? 2 : 4; // bytes per value
	for (int jb = 0; jb < n; jb += BLOCK) {
		const int je = n - jb < BLOCK ? n : jb + BLOCK, nb = je - jb;
		// Fetch one block ahead into L2, spread over the work: the scores
		// fetch the next block's keys, the values loop its values, and
		// the first block's lines are all asked for at once. Memory then
		// has lines to bring in through the whole block rather than in
		// bursts, and each line has a block's work to arrive. In a 0.5B
		// model at 4,096 positions (same process, alternating token by
		// token) this took decode from 51.2 to 56.2 tok/s with the float32
		// cache and from 57.5 to 59.3 with f16, against the block's values
		// and the next block's keys both fetched during the scores. Two
		// blocks ahead did worse than one (one thread, 24 layers' caches:
		// 192-198 against 185-191 us a kv head); widening an f16 block's
		// keys once for all heads did no better.
		// With more (the caller's next range of keys starts at row n: a
		// split context, decode_attention.go), the last block fetches the
		// BLOCK rows past n. Same process at 4,096 positions: float32
		// 50.1 -> 52.0 and 51.2 -> 54.5 tok/s, f16 55.3 -> 57.3 and
		// 57.0 -> 59.8.
		const int jn = je == n ? (more ? n + BLOCK : n) : n - je < BLOCK ? n : je + BLOCK;
		const char *pk = (const char *)k + (size_t)je * d * es, *pkEnd = (const char *)k + (size_t)jn * d * es;
		const char *pv = (const char *)v + (size_t)je * d * es, *pvEnd = (const char *)v + (size_t)jn * d * es;
		const size_t lines = (size_t)(jn - je) * d * es / 64;
		const int steps = g * ((nb + 15) / 16), passes = (g + hpc - 1) / hpc;
		const int per = (int)((lines + steps - 1) / steps), vper = (int)((lines + (size_t)nb * passes - 1) / ((size_t)nb * passes));
		if (jb == 0) {
			const char *p0 = (const char *)k, *p1 = (const char *)v;
			fetch(&p0, pk, 1 << 30);
			fetch(&p1, pv, 1 << 30);
		}
		for (int h = 0; h < g; h++) {
			const float *qh = q + (size_t)h * d;
			float *sh = s + (size_t)h * sb; // key j0 at sh[j0 - jb]
			int j0 = jb;
			for (; j0 + 16 <= je; j0 += 16) {
				__m512 acc[16];
				const size_t kb = (size_t)j0 * d;
#pragma GCC unroll 16
				for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
#pragma GCC unroll 8
				for (int c = 0; c < d; c += 16) {
					const __m512 qv = _mm512_loadu_ps(qh + c);
#pragma GCC unroll 16
					for (int j = 0; j < 16; j++) acc[j] = _mm512_fmadd_ps(ld16(k, kb + (size_t)j * d + c, half), qv, acc[j]);
				}
				_mm512_storeu_ps(sh + (j0 - jb), _mm512_mul_ps(sum16(acc), sc));
				fetch(&pk, pkEnd, per);
			}
			if (j0 < je) {
				// The last keys: rows past n repeat row n-1, never past the cache.
				__m512 acc[16];
				size_t kr[16];
				for (int j = 0; j < 16; j++) {
					acc[j] = _mm512_setzero_ps();
					kr[j] = (size_t)(j0 + j < n ? j0 + j : n - 1) * d;
				}
				for (int c = 0; c < d; c += 16) {
					const __m512 qv = _mm512_loadu_ps(qh + c);
					for (int j = 0; j < 16; j++) acc[j] = _mm512_fmadd_ps(ld16(k, kr[j] + c, half), qv, acc[j]);
				}
				_mm512_mask_storeu_ps(sh + (j0 - jb), (__mmask16)((1u << (je - j0)) - 1), _mm512_mul_ps(sum16(acc), sc));
			}
			if (block_softmax(sh, nb, &m[h], &l[h], o + (size_t)h * d, d)) return 1;
		}
		// Values: heads in chunks whose accumulators fit in 28 registers (hpc);
		// the block's value rows are loaded once per chunk, from L1/L2.
		const void *vb = half ? (const void *)((const unsigned short *)v + (size_t)jb * d) : (const void *)((const float *)v + (size_t)jb * d);
		int h0 = 0;
		for (; h0 + hpc <= g; h0 += hpc) values_acc(s + (size_t)h0 * sb, sb, 1, vb, nb, d, hpc, o + (size_t)h0 * d, half, &pv, pvEnd, vper);
		if (h0 < g) values_acc(s + (size_t)h0 * sb, sb, 1, vb, nb, d, g - h0, o + (size_t)h0 * d, half, &pv, pvEnd, vper);
	}
	for (int h = 0; h < g; h++) {
		if (m[h] == -INFINITY) return 1; // all -Inf: the caller's per-row path
		const __m512 inv = _mm512_set1_ps(1.0f / l[h]);
		for (int c = 0; c < d; c += 16) _mm512_storeu_ps(o + (size_t)h * d + c, _mm512_mul_ps(_mm512_loadu_ps(o + (size_t)h * d + c), inv));
		if (lse) lse[h] = m[h] + logf(l[h]);
	}
	return 0;
}

// HS is the head slots per key row in attn_p's scores: row j's score for
// head h at j*HS + h, so that two rows' scores for up to 8 heads fill one
// vector.
#define HS 8

// ld8x2 is 8 values at element a of a float32 or f16 row (half, as in
// ld16) in the low half of a vector and 8 at element b in the high half.
ATI __m512 ld8x2(const void *p, size_t a, size_t b, const int half) {
	if (half) {
		const unsigned short *h = (const unsigned short *)p;
		const __m128i lo = _mm_loadu_si128((const __m128i *)(h + a)), hi = _mm_loadu_si128((const __m128i *)(h + b));
		return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
	}
	const float *f = (const float *)p;
	const __m256d lo = _mm256_castps_pd(_mm256_loadu_ps(f + a)), hi = _mm256_castps_pd(_mm256_loadu_ps(f + b));
	return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1));
}

// attn_p is attn_d for G (4 to 8) query heads per kv head, taking key
// rows in pairs: a vector holds 8 values of two rows, widened once (f16)
// and multiplied into all G heads, and the sums reduce 8 lanes a row
// instead of 16 (sum8x2). attn_d instead reads each block's keys once per
// head (an f16 cache widening them G times) and reduces 16 lanes a row.
// The block's scores lie row by row (HS slots a row), so its softmax runs
// across heads: lane r*8 + h of each vector. Same result as attn_d within
// float32 rounding (the dot products sum in another order).
ATI int attn_p(const float *q, const int G, const void *k, const void *v, int n, const int d, float scale, float *o, float *lse,
               int more, const int half) {
	const int nc = d / 8, vc = d / 16, hpc = vc >= 28 ? 1 : 28 / vc;
	__m512 qd[G * nc]; // q[h][8c..8c+7] in both halves
	for (int h = 0; h < G; h++)
		for (int c = 0; c < nc; c++)
			qd[h * nc + c] = _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(q + (size_t)h * d + 8 * c))));
	float sc[BLOCK * HS] __attribute__((aligned(64)));
	const __m512 scv = _mm512_set1_ps(scale), ninf = _mm512_set1_ps(-INFINITY);
	const __mmask16 heads = (__mmask16)(((1u << G) - 1) * 0x101u);
	__m512 mv = ninf, lv = _mm512_setzero_ps(); // lane r*8 + h: head h's running maximum and sum
	for (size_t i = 0; i < (size_t)G * d; i++) o[i] = 0;
	const size_t es = half ? 2 : 4;
	for (int jb = 0; jb < n; jb += BLOCK) {
		const int je = n - jb < BLOCK ? n : jb + BLOCK, nb = je - jb, np = (nb + 1) / 2;
		// Fetches as in attn_d: one block ahead, spread over the pairs and
		// the values loop, the first block at once, and with more the last
		// block on into the next range.
		const int jn = je == n ? (more ? n + BLOCK : n) : n - je < BLOCK ? n : je + BLOCK;
		const char *pk = (const char *)k + (size_t)je * d * es, *pkEnd = (const char *)k + (size_t)jn * d * es;
		const char *pv = (const char *)v + (size_t)je * d * es, *pvEnd = (const char *)v + (size_t)jn * d * es;
		const size_t lines = (size_t)(jn - je) * d * es / 64;
		const int passes = (G + hpc - 1) / hpc;
		const int per = (int)((lines + np - 1) / np), vper = (int)((lines + (size_t)nb * passes - 1) / ((size_t)nb * passes));
		if (jb == 0) {
			const char *p0 = (const char *)k, *p1 = (const char *)v;
			fetch(&p0, pk, 1 << 30);
			fetch(&p1, pv, 1 << 30);
		}
		__m512 bmx = ninf;
		__mmask16 bad = 0;
		for (int p = 0; p < np; p++) {
			const int j = jb + 2 * p, two = j + 1 < je;
			const size_t r0 = (size_t)j * d, r1 = two ? r0 + d : r0; // a lone last row is read twice, never past n
			__m512 acc[8];
#pragma GCC unroll 8
			for (int h = 0; h < 8; h++) acc[h] = _mm512_setzero_ps();
#pragma GCC unroll 16
			for (int c = 0; c < nc; c++) {
				const __m512 kv = ld8x2(k, r0 + 8 * c, r1 + 8 * c, half);
#pragma GCC unroll 8
				for (int h = 0; h < G; h++) acc[h] = _mm512_fmadd_ps(kv, qd[h * nc + c], acc[h]);
			}
			const __mmask16 ok = two ? heads : heads & 0xFF;
			const __m512 s2 = _mm512_mask_mov_ps(ninf, ok, _mm512_mul_ps(sum8x2(acc), scv));
			_mm512_store_ps(sc + 16 * p, s2);
			bad |= _mm512_mask_cmp_ps_mask(ok, s2, s2, _CMP_UNORD_Q) | _mm512_mask_cmp_ps_mask(ok, s2, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
			bmx = _mm512_max_ps(bmx, s2);
			fetch(&pk, pkEnd, per);
		}
		if (bad) return 1; // the caller's per-row path decides NaN and +Inf
		// The block's maximum per head in both halves, and the online
		// softmax's rescaling of what the heads have summed so far.
		const __m512 mnew = _mm512_max_ps(mv, _mm512_max_ps(bmx, _mm512_shuffle_f32x4(bmx, bmx, 0x4E)));
		const __mmask16 grow = _mm512_mask_cmp_ps_mask(heads, mnew, mv, _CMP_GT_OQ);
		if (grow) {
			const __m512 a = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), grow, exp16(_mm512_sub_ps(mv, mnew)));
			float av[16] __attribute__((aligned(64)));
			_mm512_store_ps(av, a);
			lv = _mm512_mul_ps(lv, a);
			for (int h = 0; h < G; h++)
				if (grow & (1u << h)) {
					const __m512 ah = _mm512_set1_ps(av[h]);
					for (int c = 0; c < d; c += 16) _mm512_storeu_ps(o + (size_t)h * d + c, _mm512_mul_ps(_mm512_loadu_ps(o + (size_t)h * d + c), ah));
				}
			mv = mnew;
		}
		// A head whose keys so far are all -Inf adds nothing yet.
		const __mmask16 live = _mm512_mask_cmp_ps_mask(heads, mv, ninf, _CMP_NEQ_OQ);
		__m512 sum = _mm512_setzero_ps();
		for (int p = 0; p < np; p++) {
			const __mmask16 ok = 2 * p + 1 < nb ? live : live & 0xFF;
			const __m512 e = _mm512_maskz_mov_ps(ok, exp16(_mm512_sub_ps(_mm512_load_ps(sc + 16 * p), mv)));
			_mm512_store_ps(sc + 16 * p, e);
			sum = _mm512_add_ps(sum, e);
		}
		lv = _mm512_add_ps(lv, sum);
		const void *vb = half ? (const void *)((const unsigned short *)v + (size_t)jb * d) : (const void *)((const float *)v + (size_t)jb * d);
		int h0 = 0;
		for (; h0 + hpc <= G; h0 += hpc) values_acc(sc + h0, 1, HS, vb, nb, d, hpc, o + (size_t)h0 * d, half, &pv, pvEnd, vper);
		if (h0 < G) values_acc(sc + h0, 1, HS, vb, nb, d, G - h0, o + (size_t)h0 * d, half, &pv, pvEnd, vper);
	}
	float mh[16] __attribute__((aligned(64))), lh[16] __attribute__((aligned(64)));
	_mm512_store_ps(mh, mv);
	_mm512_store_ps(lh, lv);
	for (int h = 0; h < G; h++) {
		if (mh[h] == -INFINITY) return 1; // all -Inf: the caller's per-row path
		const float l = lh[h] + lh[8 + h];
		const __m512 inv = _mm512_set1_ps(1.0f / l);
		for (int c = 0; c < d; c += 16) _mm512_storeu_ps(o + (size_t)h * d + c, _mm512_mul_ps(_mm512_loadu_ps(o + (size_t)h * d + c), inv));
		if (lse) lse[h] = mh[h] + logf(l);
	}
	return 0;
}

// attn_dispatch is attn_p where it applies (4 to 8 heads per kv head),
// else attn_d, with the head size a constant for the common sizes. A
// 0.5B model's decode attention at 4,096 positions (14 heads on 2 kv
// heads, 24 layers' caches, f32 and f16 alternating in one run, median per
// layer): f16 137 -> 112 us on this Intel host and 136 -> 110 us on an AMD
// Zen 4 one; float32, bound by reading its twice as many bytes, 164 -> 163
// and 147 -> 145 us.
ATI int attn_dispatch(const float *q, int g, const void *k, const void *v, int n, int d, float scale, float *s, float *o, float *lse,
                      int more, const int half) {
#define P(G)                                                                                                                      \
	case G:                                                                                                                       \
		if (d == 64) return attn_p(q, G, k, v, n, 64, scale, o, lse, more, half);                                                       \
		if (d == 128) return attn_p(q, G, k, v, n, 128, scale, o, lse, more, half);                                                     \
		return attn_p(q, G, k, v, n, d, scale, o, lse, more, half);
	switch (g) {
		P(4)
		P(5)
		P(6)
		P(7)
		P(8)
	}
#undef P
	switch (d) {
	case 64: return attn_d(q, g, k, v, n, 64, scale, s, o, lse, more, half);
	case 128: return attn_d(q, g, k, v, n, 128, scale, s, o, lse, more, half);
	default: return attn_d(q, g, k, v, n, d, scale, s, o, lse, more, half);
	}
}

// hark_attn_decode512 is attn_dispatch; s needs g*min(n, BLOCK) floats.
// When lse is not NULL it gets each head's log-sum-exp of its scores,
// m + log(l), which is what merging the results of separate ranges of keys
// needs (a long context split across threads: decode_attention.go). more
// says the caller takes the keys and values from row n on next (fetched
// ahead; never read).
AT int hark_attn_decode512(const float *q, int g, const float *k, const float *v, int n, int d, float scale, float *s, float *o,
                           float *lse, int more) {
	return attn_dispatch(q, g, k, v, n, d, scale, s, o, lse, more, 0);
}

// hark_attn_decode512_f16 is hark_attn_decode512 over keys and values
// stored as IEEE f16 (a 16-bit KV cache): each block's rows are widened in
// registers as they are read, so the kernel reads half the bytes of the
// float32 cache, which bounds it at long contexts. The widening is exact,
// so the result is the float32 kernel's on the widened cache, bit for bit.
AT int hark_attn_decode512_f16(const float *q, int g, const unsigned short *k, const unsigned short *v, int n, int d, float scale,
                               float *s, float *o, float *lse, int more) {
	return attn_dispatch(q, g, k, v, n, d, scale, s, o, lse, more, 1);
}
