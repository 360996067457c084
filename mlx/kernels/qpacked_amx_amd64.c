//go:build cgo

// The packed 4-bit kernel for several rows of x at once (concurrent decode
// streams, 4 to 16 rows), on AMX-INT8.
//
// With VNNI (qpacked_amd64.c) every row of x costs six VPDPBUSDs per 64
// code bytes and weight row, so 8 rows cost 8 times the arithmetic of one
// and a batched decode step became compute bound. One TDPBUSD multiplies
// a 16-row by 32-byte tile of codes with a 32-byte by 16-column tile of x
// digits: the codes of 16 weight rows (4 packed tiles) are split into
// nibbles once per 128 values and then serve every row of x and each of
// its three digits (qmatmul_i24_amd64.c), one x tile per digit with row i
// in column i. What is left per 64 values is the float scaling of three
// 16x16 integer results, vectorized over the rows of x; the TDPBUSDs run
// beside it on the tile unit. So the cost of a call hardly depends on m:
// in CPU cycles (perf, same run) VNNI over AMX was about 1.4 at 4 rows,
// 2.3 at 8 and 4.2 at 16, and VNNI stays faster below 4.
//
// The integer sums (64 products of a code and a digit, below 2^17) are
// converted separately and weighted by 2^16, 2^8 and 1 in float, so the
// results agree with the VNNI kernel and the float64 reference within the
// same float32 tolerance, though not bit for bit (a row's result does not
// depend on the other rows of x, within either kernel). Linux must grant
// the process the tile state (arch_prctl ARCH_REQ_XCOMP_PERM), which
// hark_pq4_amx_ok asks once; each call loads its tile configuration and
// releases the tiles on return, so a thread holds tile state only inside
// the kernel.

#include <immintrin.h>
#include <cpuid.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "qmatmul.h"
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define AMX_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,gfni,fma,amx-tile,amx-int8"

// The four tiles of a block are read side by side, four streams; each
// asks for the same bytes of the next block (4 tiles ahead) into L2. A
// fixed distance (HARK_PQ4_PF) lands inside the current block for short
// rows, and then the next block's later tiles come in on demand.
#ifndef HARK_PQ4_AMX_PF
#define HARK_PQ4_AMX_PF 1
#endif

int hark_pq4_amx_ok(void) {
	static volatile int cached = -1;
	if (cached >= 0) return cached;
	int ok = 0;
#ifdef __linux__
	unsigned a, b, c, d;
	// CPUID.(7,0):EDX bit 24 AMX-TILE, bit 25 AMX-INT8.
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 24)) && (d & (1u << 25))) {
		// ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18).
		ok = syscall(SYS_arch_prctl, 0x1023, 18) == 0;
	}
#endif
	cached = ok;
	return ok;
}

// hark_pq4_amx_cols is how many 16-column x tiles m rows take: one per
// digit, so that the three results of a row sit in the same lane of three
// tiles and sum in registers.
int hark_pq4_amx_cols(int m) { return 3; }

// hark_pq4_amx_prep rearranges x's digits (xd, xsv, xsum from
// hark_q4i24_prep_sums; m <= 16) into what the tile kernel loads. Per
// 64 values ch of a row, nibble half hf (even values, odd values) and
// digit d: xb holds a tile of 8 rows of 64 bytes, row r column i the four
// digits d of row i's values 2(4r..4r+3)+hf; cf holds per ch and d the
// float weight of each column (x's lane scale times 2^16, 2^8 or 1); xst
// holds per group the sums of x, 16 floats per group. Columns past m are
// zero.
void hark_pq4_amx_prep(const int8_t* xd, const float* xsv, const float* xsum, int m, int k, int gs,
                       int8_t* xb, float* cf, float* xst) {
	const int nb = k / 128, nch = k / 64, gpr = k / gs;
	memset(xb, 0, (size_t)nch * 6 * 512);
	memset(cf, 0, (size_t)nch * 3 * 16 * sizeof(float));
	for (int ch = 0; ch < nch; ch++) {
		const int l = ch / 2, h2 = ch % 2;
		int8_t* xbc = xb + (size_t)ch * 6 * 512;
		for (int d = 0; d < 3; d++) {
			const float dw = d == 0 ? 65536.0f : d == 1 ? 256.0f : 1.0f;
			for (int i = 0; i < m; i++) {
				const int8_t* src = xd + ((size_t)i * nb + l) * 384 + d * 128 + h2 * 32;
				for (int hf = 0; hf < 2; hf++) {
					int8_t* dst = xbc + (size_t)(hf * 3 + d) * 512 + i * 4;
					for (int r = 0; r < 8; r++) memcpy(dst + r * 64, src + hf * 64 + 4 * r, 4);
				}
				cf[(size_t)ch * 48 + d * 16 + i] = xsv[((size_t)i * nb + l) * 16 + h2 * 8] * dw;
			}
		}
	}
	for (int g = 0; g < gpr; g++)
		for (int i = 0; i < 16; i++) xst[g * 16 + i] = i < m ? xsum[(size_t)i * gpr + g] : 0.0f;
}

typedef struct {
	uint8_t palette, start;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} amx_cfg;

// Digit d of chunk h2: tile T accumulates the even and the odd halves
// and lands in cb.
#define AMX_DIGIT(T, d)                                                   \
	do {                                                                  \
		_tile_zero(T);                                                    \
		_tile_loadd(2, xbc + (size_t)(d) * 512, 64);                      \
		_tile_dpbusd(T, 0, 2);                                            \
		_tile_loadd(3, xbc + (size_t)(3 + (d)) * 512, 64);                \
		_tile_dpbusd(T, 1, 3);                                            \
		_tile_stored(T, cb + (d) * 256, 64);                              \
	} while (0)

// amx_scale adds one chunk ch (64 values) of the block's integer results
// cb (3 digits × 16 weight rows × 16 rows of x) to acc: per weight row r,
// lane i, the digits weighted in float, times the row's scale, and at the
// end of a group its bias times the sums of x. gq is the group's index in
// its superblock, meta the superblock's scales and biases per tile.
__attribute__((target(AMX_TARGET), always_inline)) static inline void amx_scale(__m512* acc, const int32_t* cb,
                                                                                 const float* cfc, const float* xs,
                                                                                 const float* const* meta, int gq,
                                                                                 int bias) {
	const __m512 fa = _mm512_loadu_ps(cfc), fb = _mm512_loadu_ps(cfc + 16), fc = _mm512_loadu_ps(cfc + 32);
	const __m512 xsv = _mm512_loadu_ps(xs);
#pragma GCC unroll 16
	for (int r = 0; r < 16; r++) {
		const float* mt = meta[r / 4] + 2 * (r % 4) + gq;
		__m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(cb + r * 16)), fa);
		t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(cb + 256 + r * 16)), fb, t);
		t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(cb + 512 + r * 16)), fc, t);
		acc[r] = _mm512_fmadd_ps(t, _mm512_set1_ps(mt[0]), acc[r]);
		if (bias) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(mt[8]), xsv, acc[r]);
	}
}

// amx_blocks runs blocks [b0, b1) of 16 weight rows (4 packed tiles each;
// all 4 tiles must exist, rows past n are dropped). The loop is software
// pipelined: the tile unit works on 128 values while the vector units
// scale the integer results of the 128 before them.
__attribute__((target(AMX_TARGET))) static void amx_blocks(const int8_t* xb, const float* cf, const float* xst, int m,
                                                            const uint8_t* p, int k, int gs, int n, int b0, int b1,
                                                            float* out, int ldo) {
	amx_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	cfg.rows[0] = cfg.rows[1] = 16; // codes: low and high nibbles
	cfg.colsb[0] = cfg.colsb[1] = 32;
	cfg.rows[2] = cfg.rows[3] = 8; // x digits, even and odd values
	cfg.colsb[2] = cfg.colsb[3] = 64;
	for (int t = 4; t < 7; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64; // one result tile per digit
	_tile_loadconfig(&cfg);

	const size_t tb = hark_pq4_tile_bytes(k, gs);
	const int nb = k / 128, gpr = k / gs;
	const int bps = gs == 64 ? 1 : 2; // code blocks per full superblock
	const __m512i m4 = _mm512_set1_epi8(0x0F);
	const __m512i shr4 = _mm512_set1_epi64(0x1020408000000000LL);
	_Alignas(64) uint8_t alo[16 * 64], ahi[16 * 64];
	// Results of two 128-value steps (the one scaled and the one on the
	// tile unit), each two chunks of 3 digit tiles.
	_Alignas(64) int32_t cbuf[2][2][3 * 256];
	_Alignas(64) float res[16 * 16];
	for (int blk = b0; blk < b1; blk++) {
		const uint8_t* tp = p + (size_t)blk * 4 * tb;
		// acc[r] lane i: weight row r of the block times row i of x.
		__m512 acc[16];
		for (int r = 0; r < 16; r++) acc[r] = _mm512_setzero_ps();
		const float* meta[2][4];
		for (int l = 0; l <= nb; l++) {
			const int cur = l & 1, prev = cur ^ 1;
			if (l < nb) {
				const int sb = gs == 64 ? l : l / 2, inb = gs == 64 ? 0 : l % 2;
				const int nbk = gs == 64 ? 1 : (gpr - 2 * sb < 2 ? 1 : 2);
				const size_t so = (size_t)sb * (bps * 256 + 64);
				for (int tt = 0; tt < 4; tt++) {
					const uint8_t* c = tp + tt * tb + so + inb * 256;
					meta[cur][tt] = (const float*)(tp + tt * tb + so + nbk * 256);
#if HARK_PQ4_AMX_PF > 0
					if (blk + 1 < b1)
						for (int z = 0; z < 320; z += 64) _mm_prefetch((const char*)c + 4 * tb + z, _MM_HINT_T1);
#endif
					for (int j = 0; j < 4; j++) {
						const __m512i w = _mm512_loadu_si512(c + j * 64);
						_mm512_store_si512(alo + (tt * 4 + j) * 64, _mm512_and_si512(w, m4));
						_mm512_store_si512(ahi + (tt * 4 + j) * 64, _mm512_gf2p8affine_epi64_epi8(w, shr4, 0));
					}
				}
				for (int h2 = 0; h2 < 2; h2++) {
					const int8_t* xbc = xb + (size_t)(2 * l + h2) * 6 * 512;
					int32_t* cb = cbuf[cur][h2];
					_tile_loadd(0, alo + h2 * 32, 64);
					_tile_loadd(1, ahi + h2 * 32, 64);
					AMX_DIGIT(4, 0);
					AMX_DIGIT(5, 1);
					AMX_DIGIT(6, 2);
				}
			}
			if (l > 0) {
				const int pl = l - 1, sb = gs == 64 ? pl : pl / 2;
				for (int h2 = 0; h2 < 2; h2++) {
					const int ch = 2 * pl + h2, g = ch * 64 / gs;
					amx_scale(acc, cbuf[prev][h2], cf + (size_t)ch * 48, xst + (size_t)g * 16, meta[prev], g - 2 * sb,
					          (ch + 1) * 64 % gs == 0);
				}
			}
		}
		for (int r = 0; r < 16; r++) _mm512_store_ps(res + r * 16, acc[r]);
		for (int r = 0; r < 16 && blk * 16 + r < n; r++)
			for (int i = 0; i < m; i++) out[(size_t)i * ldo + blk * 16 + r] = res[r * 16 + i];
	}
	_tile_release();
}

// hark_pq4_amx computes tiles [t0, t1) (t0 a multiple of 4) of an n-row
// packed matrix against m (<= 16) rows of x: whole blocks of 4 tiles on
// the tile unit from xb, cf and xst (hark_pq4_amx_prep), and a last partial
// block with hark_pq4 from xd, xsv and xsum.
void hark_pq4_amx(const int8_t* xb, const float* cf, const float* xst, const int8_t* xd, const float* xsv,
                  const float* xsum, int m, const uint8_t* p, int k, int gs, int n, int t0, int t1, float* out,
                  int ldo) {
	const int full = t0 + (t1 - t0) / 4 * 4;
	if (full > t0) amx_blocks(xb, cf, xst, m, p, k, gs, n, t0 / 4, full / 4, out, ldo);
	if (t1 > full) hark_pq4(xd, xsv, xsum, m, p, k, gs, n, full, t1, out, ldo);
}
