//go:build cgo

// Blocked single-precision GEMM for amd64 in the classic Goto/BLIS
// structure: B is packed into KC x NR panels (sized for L1), A into MC x KC
// blocks of MR-row panels (sized for L2), and a register-tile micro-kernel
// does all the arithmetic: 6x16 with AVX2/FMA, 12x32 with AVX-512 (CPUs
// with full-width 512-bit FMA units do twice the work per instruction). Threads are Go
// goroutines: each calls hark_sgemm_avx2 on its own slab of C with its own
// packing buffers, so the C code is single-threaded and lock-free.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MR 6
#define NR 16
#define MR512 12
#define NR512 32
#define KC 256
#define MC 120
#define NC 3072
#define MAXMR 12
#define MAXNR 32

#define AVX2 __attribute__((target("avx2,fma")))

// Packing buffer sizes (floats) the Go side must provide per thread.
int hark_sgemm_pack_a_len(void) { return MC * KC; }
int hark_sgemm_pack_b_len(void) { return KC * NC; }

// pack_a copies op(A)[i0:i0+mc, p0:p0+kc] into MR-row panels, each stored
// k-major (MR values per k step), zero-padding the last panel.
static void pack_a(int ta, const float* a, int lda, int i0, int mc, int p0, int kc, float* pa, int MRv) {
	for (int ir = 0; ir < mc; ir += MRv) {
		int mr = mc - ir < MRv ? mc - ir : MRv;
		for (int p = 0; p < kc; p++) {
			for (int i = 0; i < mr; i++) {
				int ii = i0 + ir + i, pp = p0 + p;
				pa[i] = ta ? a[(size_t)pp * lda + ii] : a[(size_t)ii * lda + pp];
			}
			for (int i = mr; i < MRv; i++) pa[i] = 0;
			pa += MRv;
		}
	}
}

// pack_b copies op(B)[p0:p0+kc, j0:j0+nc] into NR-column panels, each
// stored k-major (NR values per k step), zero-padding the last panel.
static void pack_b(int tb, const float* b, int ldb, int p0, int kc, int j0, int nc, float* pb, int NRv) {
	for (int jr = 0; jr < nc; jr += NRv) {
		int nr = nc - jr < NRv ? nc - jr : NRv;
		for (int p = 0; p < kc; p++) {
			int pp = p0 + p;
			if (!tb && nr == NRv) {
				memcpy(pb, b + (size_t)pp * ldb + j0 + jr, NRv * sizeof(float));
			} else {
				for (int j = 0; j < nr; j++) {
					int jj = j0 + jr + j;
					pb[j] = tb ? b[(size_t)jj * ldb + pp] : b[(size_t)pp * ldb + jj];
				}
				for (int j = nr; j < NRv; j++) pb[j] = 0;
			}
			pb += NRv;
		}
	}
}

// ukr computes the 6x16 tile acc = pa·pb over kc steps and writes
// C = alpha*acc + beta*C; beta == 0 never reads C (BLAS semantics).
AVX2 static void ukr(int kc, const float* pa, const float* pb, float* c, size_t ldc, float alpha, float beta) {
	__m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
	__m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
	__m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
	__m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
	__m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
	__m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
	for (int p = 0; p < kc; p++) {
		__m256 b0 = _mm256_loadu_ps(pb), b1 = _mm256_loadu_ps(pb + 8);
		__m256 a;
		a = _mm256_broadcast_ss(pa + 0);
		c00 = _mm256_fmadd_ps(a, b0, c00), c01 = _mm256_fmadd_ps(a, b1, c01);
		a = _mm256_broadcast_ss(pa + 1);
		c10 = _mm256_fmadd_ps(a, b0, c10), c11 = _mm256_fmadd_ps(a, b1, c11);
		a = _mm256_broadcast_ss(pa + 2);
		c20 = _mm256_fmadd_ps(a, b0, c20), c21 = _mm256_fmadd_ps(a, b1, c21);
		a = _mm256_broadcast_ss(pa + 3);
		c30 = _mm256_fmadd_ps(a, b0, c30), c31 = _mm256_fmadd_ps(a, b1, c31);
		a = _mm256_broadcast_ss(pa + 4);
		c40 = _mm256_fmadd_ps(a, b0, c40), c41 = _mm256_fmadd_ps(a, b1, c41);
		a = _mm256_broadcast_ss(pa + 5);
		c50 = _mm256_fmadd_ps(a, b0, c50), c51 = _mm256_fmadd_ps(a, b1, c51);
		pa += MR;
		pb += NR;
	}
	__m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#define STORE(row, lo, hi)                                                              \
	do {                                                                                \
		float* cr = c + (size_t)(row) * ldc;                                            \
		__m256 r0 = _mm256_mul_ps(va, lo), r1 = _mm256_mul_ps(va, hi);                  \
		if (beta != 0) {                                                                \
			r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr), r0);                          \
			r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(cr + 8), r1);                      \
		}                                                                               \
		_mm256_storeu_ps(cr, r0);                                                       \
		_mm256_storeu_ps(cr + 8, r1);                                                   \
	} while (0)
	STORE(0, c00, c01);
	STORE(1, c10, c11);
	STORE(2, c20, c21);
	STORE(3, c30, c31);
	STORE(4, c40, c41);
	STORE(5, c50, c51);
#undef STORE
}

// AVX-512 12x32 tile: 24 accumulators in zmm registers.
#define AVX512 __attribute__((target("avx512f")))
AVX512 static void ukr512(int kc, const float* pa, const float* pb, float* c, size_t ldc, float alpha, float beta) {
	__m512 acc[MR512][2];
	for (int i = 0; i < MR512; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
	for (int p = 0; p < kc; p++) {
		__m512 b0 = _mm512_loadu_ps(pb), b1 = _mm512_loadu_ps(pb + 16);
#pragma GCC unroll 12
		for (int i = 0; i < MR512; i++) {
			__m512 a = _mm512_set1_ps(pa[i]);
			acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
			acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
		}
		pa += MR512;
		pb += NR512;
	}
	__m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
	for (int i = 0; i < MR512; i++) {
		float* cr = c + (size_t)i * ldc;
		__m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
		if (beta != 0) {
			r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr), r0);
			r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(cr + 16), r1);
		}
		_mm512_storeu_ps(cr, r0);
		_mm512_storeu_ps(cr + 16, r1);
	}
}

typedef void (*ukr_fn)(int kc, const float* pa, const float* pb, float* c, size_t ldc, float alpha, float beta);

// edge handles a partial mr x nr tile through a full-size scratch tile.
static void edge(ukr_fn k, int NRv, int kc, const float* pa, const float* pb, float* c, size_t ldc, int mr, int nr,
                 float alpha, float beta) {
	float t[MAXMR * MAXNR];
	k(kc, pa, pb, t, NRv, 1, 0);
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < nr; j++) {
			float v = alpha * t[i * NRv + j];
			float* cij = c + (size_t)i * ldc + j;
			*cij = beta == 0 ? v : v + beta * *cij;
		}
}

// hark_sgemm_amd64 computes rows [i0, i1) and columns [j0, j1) of
// C = alpha*op(A)*op(B) + beta*C (row-major) using the caller's packing
// buffers pa (hark_sgemm_pack_a_len floats) and pb (hark_sgemm_pack_b_len).
// use512 selects the AVX-512 kernel; the caller checks CPU support.
void hark_sgemm_amd64(int use512, int ta, int tb, int i0, int i1, int j0, int j1, int k, float alpha,
                      const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc, float* pa,
                      float* pb) {
	const int MRv = use512 ? MR512 : MR, NRv = use512 ? NR512 : NR;
	const ukr_fn kern = use512 ? ukr512 : ukr;
	for (int jc = j0; jc < j1; jc += NC) {
		int nc = j1 - jc < NC ? j1 - jc : NC;
		for (int pc = 0; pc < k; pc += KC) {
			int kc = k - pc < KC ? k - pc : KC;
			// Only the first k block applies the caller's beta.
			float bt = pc == 0 ? beta : 1.0f;
			pack_b(tb, b, ldb, pc, kc, jc, nc, pb, NRv);
			for (int ic = i0; ic < i1; ic += MC) {
				int mc = i1 - ic < MC ? i1 - ic : MC;
				pack_a(ta, a, lda, ic, mc, pc, kc, pa, MRv);
				for (int jr = 0; jr < nc; jr += NRv) {
					int nr = nc - jr < NRv ? nc - jr : NRv;
					const float* pbj = pb + (size_t)jr * kc;
					for (int ir = 0; ir < mc; ir += MRv) {
						int mr = mc - ir < MRv ? mc - ir : MRv;
						float* cij = c + (size_t)(ic + ir) * ldc + jc + jr;
						const float* pai = pa + (size_t)ir * kc;
						if (mr == MRv && nr == NRv)
							kern(kc, pai, pbj, cij, ldc, alpha, bt);
						else
							edge(kern, NRv, kc, pai, pbj, cij, ldc, mr, nr, alpha, bt);
					}
				}
			}
		}
	}
}

// hark_sgemm_pack_a512 and hark_sgemm_tile512 lend pack_a and the
// AVX-512 register tile (with its edge handling) to the 16-bit weight
// GEMM (hgemm_amd64.c), which packs its own B panels from 16-bit weights.
void hark_sgemm_pack_a512(const float* a, int lda, int i0, int mc, int p0, int kc, float* pa) {
	pack_a(0, a, lda, i0, mc, p0, kc, pa, MR512);
}

// hark_sgemm_blocks gives the cache blocking (KC, MC, NC) so that a GEMM
// built from the pieces above sums in the same order as hark_sgemm_amd64.
void hark_sgemm_blocks(int* kc, int* mc, int* nc) { *kc = KC, *mc = MC, *nc = NC; }

void hark_sgemm_tile512(int kc, const float* pa, const float* pb, float* c, int ldc, int mr, int nr, float beta) {
	if (mr == MR512 && nr == NR512)
		ukr512(kc, pa, pb, c, (size_t)ldc, 1, beta);
	else
		edge(ukr512, NR512, kc, pa, pb, c, (size_t)ldc, mr, nr, 1, beta);
}

// pack_bq512 is pack_b for B = W^T with W an MLX-quantized matrix [n, k]
// (bits 2, 4 or 8: whole values per 32-bit word): it dequantizes the
// weights straight into the 32-column panels. The dequantized-tile path
// (Dequantize into a float tile, then pack_b) wrote and re-read 4 bytes per
// weight and read them back one column at a time; here each k step of a
// panel is 32 weights of 32 rows, from one gathered word per row per
// 32/bits k steps, so a prefill reads W's packed bytes and nothing else.
// Partial panels (fewer than 32 rows) pad with zero rows.
AVX512 static void pack_bq512(const uint32_t* w, const float* sc, const float* bi, int k, int gs, int bits, int p0,
                              int kc, int j0, int nc, float* pb) {
	const int vpw = 32 / bits, wpr = k / vpw, gpr = k / gs;
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i mask = _mm512_set1_epi32((1 << bits) - 1);
	for (int jr = 0; jr < nc; jr += NR512) {
		const int nr = nc - jr < NR512 ? nc - jr : NR512;
		for (int h = 0; h < 2; h++) {
			const int r0 = j0 + jr + 16 * h, live = nr - 16 * h;
			float* out = pb + (size_t)jr * kc + 16 * h;
			if (live <= 0) {
				for (int p = 0; p < kc; p++) _mm512_storeu_ps(out + (size_t)p * NR512, _mm512_setzero_ps());
				continue;
			}
			const __mmask16 rows = live >= 16 ? 0xFFFF : (__mmask16)((1u << live) - 1);
			const __m512i widx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(wpr));
			const __m512i gidx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(gpr));
			const uint32_t* wr = w + (size_t)r0 * wpr;
			const float* sr = sc + (size_t)r0 * gpr;
			const float* br = bi + (size_t)r0 * gpr;
			__m512 s = _mm512_setzero_ps(), b = _mm512_setzero_ps();
			for (int p = 0; p < kc; p += vpw) {
				const int pp = p0 + p;
				if (p == 0 || pp % gs == 0) {
					s = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), rows, gidx, sr + pp / gs, 4);
					b = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), rows, gidx, br + pp / gs, 4);
				}
				__m512i words =
				    _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), rows, widx, (const int*)(wr + pp / vpw), 4);
				for (int t = 0; t < vpw; t++) {
					__m512 v = _mm512_cvtepi32_ps(_mm512_and_si512(words, mask));
					_mm512_storeu_ps(out + (size_t)(p + t) * NR512, _mm512_fmadd_ps(v, s, b));
					words = _mm512_srli_epi32(words, bits);
				}
			}
		}
	}
}

// pack_bpq512 is pack_bq512 for a 4-bit W in the packed layout of
// qpacked.go (tiles of 4 rows, superblocks of two groups, groups of 64 or
// 128): the same words, found at per-lane byte offsets. Panels start on a
// multiple of 32 rows, so each half panel is 4 whole tiles.
AVX512 static void pack_bpq512(const uint8_t* pq, int k, int gs, int p0, int kc, int j0, int nc, float* pb) {
	const size_t tb = (size_t)(k / 128) * 256 + (size_t)((k / gs + 1) / 2) * 64;
	const int sbFull = (gs / 64) * 256 + 64;
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i tile = _mm512_mullo_epi32(_mm512_srli_epi32(lane, 2), _mm512_set1_epi32((int)tb));
	const __m512i j4 = _mm512_and_si512(lane, _mm512_set1_epi32(3));
	const __m512i codeIdx = _mm512_add_epi32(tile, _mm512_slli_epi32(j4, 6)); // + 64 bytes per row
	const __m512i metaIdx = _mm512_add_epi32(tile, _mm512_slli_epi32(j4, 3)); // + 2 floats per row
	const __m512i mask = _mm512_set1_epi32(15);
	for (int jr = 0; jr < nc; jr += NR512) {
		const int nr = nc - jr < NR512 ? nc - jr : NR512;
		for (int h = 0; h < 2; h++) {
			const int r0 = j0 + jr + 16 * h, live = nr - 16 * h;
			float* out = pb + (size_t)jr * kc + 16 * h;
			if (live <= 0) {
				for (int p = 0; p < kc; p++) _mm512_storeu_ps(out + (size_t)p * NR512, _mm512_setzero_ps());
				continue;
			}
			const __mmask16 rows = live >= 16 ? 0xFFFF : (__mmask16)((1u << live) - 1);
			const uint8_t* base = pq + (size_t)(r0 / 4) * tb;
			__m512 s = _mm512_setzero_ps(), b = _mm512_setzero_ps();
			for (int p = 0; p < kc; p += 8) {
				const int pp = p0 + p, sb = pp / (2 * gs), within = pp % (2 * gs);
				const size_t sbOff = (size_t)sb * sbFull;
				if (p == 0 || pp % gs == 0) {
					const int nbk = (sb + 1) * 2 * gs <= k ? gs / 64 : 1;
					const uint8_t* meta = base + sbOff + (size_t)nbk * 256 + 4 * (within / gs);
					s = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), rows, metaIdx, meta, 1);
					b = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), rows, metaIdx, meta + 32, 1);
				}
				const uint8_t* code = base + sbOff + (size_t)(within / 128) * 256 + ((within % 128) / 8) * 4;
				__m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), rows, codeIdx, code, 1);
				for (int t = 0; t < 8; t++) {
					__m512 v = _mm512_cvtepi32_ps(_mm512_and_si512(words, mask));
					_mm512_storeu_ps(out + (size_t)(p + t) * NR512, _mm512_fmadd_ps(v, s, b));
					words = _mm512_srli_epi32(words, 4);
				}
			}
		}
	}
}

// hark_pack_bq512 and hark_pack_bpq512 export the dequantizing packers
// for the AMX GEMM (amx_amd64.c), which rounds their panels to bf16.
AVX512 void hark_pack_bq512(const uint32_t* w, const float* sc, const float* bi, int k, int gs, int bits, int p0,
                            int kc, int j0, int nc, float* pb) {
	pack_bq512(w, sc, bi, k, gs, bits, p0, kc, j0, nc, pb);
}

AVX512 void hark_pack_bpq512(const uint8_t* pq, int k, int gs, int p0, int kc, int j0, int nc, float* pb) {
	pack_bpq512(pq, k, gs, p0, kc, j0, nc, pb);
}

// hark_qgemm_t_amd64 computes rows [i0, i1) and columns [j0, j1) of
// C = A·W^T (row-major, beta 0) for W quantized [n, k] (hark_qgemm_t_ok),
// in the MLX layout (w, sc, bi) or, when pq is not NULL, 4-bit in the
// packed layout (pq; j0 then a multiple of 32),
// with the AVX-512 micro-kernel and the caller's packing buffers: the loop
// nest of hark_sgemm_amd64 (beta 0, A not transposed), each weight
// code·scale + bias rounded once (as the SIMD Dequantize).
AVX512 void hark_qgemm_t_amd64(int i0, int i1, int j0, int j1, int k, const float* a, int lda, const uint32_t* w,
                               const float* sc, const float* bi, const uint8_t* pq, int gs, int bits, float* c,
                               int ldc, float* pa, float* pb) {
	for (int jc = j0; jc < j1; jc += NC) {
		int nc = j1 - jc < NC ? j1 - jc : NC;
		for (int pc = 0; pc < k; pc += KC) {
			int kc = k - pc < KC ? k - pc : KC;
			float bt = pc == 0 ? 0.0f : 1.0f;
			if (pq)
				pack_bpq512(pq, k, gs, pc, kc, jc, nc, pb);
			else
				pack_bq512(w, sc, bi, k, gs, bits, pc, kc, jc, nc, pb);
			for (int ic = i0; ic < i1; ic += MC) {
				int mc = i1 - ic < MC ? i1 - ic : MC;
				pack_a(0, a, lda, ic, mc, pc, kc, pa, MR512);
				for (int jr = 0; jr < nc; jr += NR512) {
					int nr = nc - jr < NR512 ? nc - jr : NR512;
					const float* pbj = pb + (size_t)jr * kc;
					for (int ir = 0; ir < mc; ir += MR512) {
						int mr = mc - ir < MR512 ? mc - ir : MR512;
						float* cij = c + (size_t)(ic + ir) * ldc + jc + jr;
						const float* pai = pa + (size_t)ir * kc;
						if (mr == MR512 && nr == NR512)
							ukr512(kc, pai, pbj, cij, ldc, 1, bt);
						else
							edge(ukr512, NR512, kc, pai, pbj, cij, ldc, mr, nr, 1, bt);
					}
				}
			}
		}
	}
}

// hark_qgemm_t_ok reports whether hark_qgemm_t_amd64 takes this format:
// whole values per word, and KC a multiple of the group size or the group
// size of KC, so a KC block starts on a word and a group boundary.
int hark_qgemm_t_ok(int k, int gs, int bits) {
	return (bits == 2 || bits == 4 || bits == 8) && gs > 0 && (KC % gs == 0) && k % gs == 0 && gs % (32 / bits) == 0;
}
