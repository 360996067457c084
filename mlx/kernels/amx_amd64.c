//go:build cgo

// bf16 GEMM on Intel AMX (Sapphire Rapids and later) for prefill:
// C(f32, M x N) = A(bf16, M x K) · B(bf16, K x N), where A is the
// activations rounded to bf16 once per call and B = Wᵀ is a panel of 32
// weight rows packed into AMX's VNNI layout (pairs of k values per 32-bit
// lane). One TDPBF16PS does a 16x16x32 block (16,384 flops); the AVX-512
// FMA path does 32 flops per instruction, so prefill goes from
// compute-bound to bound by packing and memory.
//
// Only these functions use AMX instructions, each through a function-level
// target attribute, so the rest of the package keeps its baseline. Every
// call that loads a tile configuration releases it before returning
// (TILERELEASE), so a thread goes back to Go with AMX in its initial state:
// context switches and signal frames then carry no tile data.
//
// Tile use in the micro-kernel (2x2 blocking, all 8 tiles 16 rows x 64
// bytes): tmm0-3 the 32x32 block of C, tmm4-5 two 16-row blocks of A,
// tmm6-7 the panel's two 16-column halves of B.

#include <cpuid.h>
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define AMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512bf16")))
#define BF16V __attribute__((target("avx512f,avx512bw,avx512bf16")))

// KCA is the k block: a block of A (M x KCA bf16) stays in L2 while every
// panel of the worker's columns passes over it. A multiple of 256, the k
// block of the quantized packers.
#define KCA 512

// Sizes (in bytes) of the per-worker scratch the Go side provides.
int hark_amx_pb_bytes(void) { return KCA * 32 * 2; }
int hark_amx_fs_bytes(void) { return 256 * 32 * 4; }

// The f32 panel packers of sgemm_amd64.c (dequantizing 4-bit weights).
void hark_pack_bq512(const uint32_t* w, const float* sc, const float* bi, int k, int gs, int bits, int p0, int kc,
                     int j0, int nc, float* pb);
void hark_pack_bpq512(const uint8_t* pq, int k, int gs, int p0, int kc, int j0, int nc, float* pb);

// hark_amx_init reports whether this process can run the AMX kernels:
// the CPU has AMX-TILE, AMX-BF16 and AVX512-BF16 (for rounding A), the OS
// manages the tile state (XCR0 bits 17 and 18), and Linux granted this
// process the tile data feature (ARCH_REQ_XCOMP_PERM, once per process,
// for every thread). Anything else (another OS, a kernel before 5.16, a
// hypervisor hiding the state) answers 0 and the AVX-512 path stays.
int hark_amx_init(void) {
	unsigned a, b, c, d;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
	if (!(d & (1u << 22)) || !(d & (1u << 24))) return 0; // AMX-BF16, AMX-TILE
	if (!(b & (1u << 16)) || !(b & (1u << 30))) return 0; // AVX512F, AVX512BW
	if (a < 1) return 0;
	unsigned a1, b1, c1, d1;
	__cpuid_count(7, 1, a1, b1, c1, d1);
	if (!(a1 & (1u << 5))) return 0; // AVX512-BF16
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; // OSXSAVE
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 0x60000) != 0x60000) return 0; // XTILECFG, XTILEDATA
#ifdef __linux__
	const long ARCH_GET_XCOMP_PERM = 0x1022, ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) return 0;
	unsigned long perm = 0;
	if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &perm) != 0) return 0;
	return (perm >> XFEATURE_XTILEDATA) & 1;
#else
	return 0;
#endif
}

// hark_amx_cvt_a rounds rows [i0, i1) of x (f32, [m, k], row-major) to
// bf16 (nearest even) into ab ([.., kp], row-major), zero-filling columns
// k..kp and rows at or past m.
BF16V void hark_amx_cvt_a(const float* x, int m, int k, int i0, int i1, uint16_t* ab, int kp) {
	for (int i = i0; i < i1; i++) {
		uint16_t* o = ab + (size_t)i * kp;
		if (i >= m) {
			memset(o, 0, (size_t)kp * 2);
			continue;
		}
		const float* r = x + (size_t)i * k;
		int p = 0;
		for (; p + 32 <= k; p += 32) {
			__m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(r + p + 16), _mm512_loadu_ps(r + p));
			_mm512_storeu_si512(o + p, (__m512i)v);
		}
		for (; p < kp; p += 32) {
			int left = k - p;
			__mmask16 m0 = left >= 16 ? 0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
			__mmask16 m1 = left >= 32 ? 0xFFFF : left > 16 ? (__mmask16)((1u << (left - 16)) - 1) : 0;
			__m512 lo = _mm512_maskz_loadu_ps(m0, r + p), hi = _mm512_maskz_loadu_ps(m1, r + p + 16);
			_mm512_storeu_si512(o + p, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
		}
	}
}

// pair interleaves two rows of 16 f32 (k and k+1) into one 64-byte tile row
// of VNNI pairs: lane c holds bf16(lo[c]) in its low half, bf16(hi[c]) high.
BF16V static inline __m512i pair(__m512 lo, __m512 hi) {
	__m512i l = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(lo));
	__m512i h = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(hi));
	return _mm512_or_si512(l, _mm512_slli_epi32(h, 16));
}

// transpose16 transposes 16 rows of 16 32-bit words in place: unpacks
// build 4x4 blocks within each 128-bit lane, two lane shuffles gather them.
BF16V static inline void transpose16(__m512i r[16]) {
	__m512i t[16], u[16];
#pragma GCC unroll 8
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
#pragma GCC unroll 4
	for (int g = 0; g < 16; g += 4) { // rows g..g+3: u[g+j] is their column 4L+j in lane L
		u[g + 0] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
		u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
		u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
		u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
	}
#pragma GCC unroll 4
	for (int j = 0; j < 4; j++) {
		__m512i v0 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88), v1 = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xDD);
		__m512i w0 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x88), w1 = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xDD);
		r[j] = _mm512_shuffle_i32x4(v0, w0, 0x88);
		r[8 + j] = _mm512_shuffle_i32x4(v0, w0, 0xDD);
		r[4 + j] = _mm512_shuffle_i32x4(v1, w1, 0x88);
		r[12 + j] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
	}
}

// pack_bf16 packs rows [j0, j0+nc) (nc <= 32; missing rows zero) and
// columns [pc, pc+kc) (kc a multiple of 32; columns past k zero) of a bf16
// W [n, k] into VNNI tiles: tile row r of step s, lane c, holds
// W[j0+c][pc+32s+2r] and W[j0+c][pc+32s+2r+1], the r-th 32-bit word of
// the step's 64 bytes of row c: each tile is a 16x16 word transpose of 16
// rows' 64-byte loads.
BF16V static void pack_bf16(const uint16_t* w, int k, int pc, int kc, int j0, int nc, uint16_t* pb) {
	for (int s = 0; s < kc / 32; s++) {
		const int pp = pc + 32 * s, valid = k - pp;
		const __mmask32 cols = valid >= 32 ? 0xFFFFFFFFu : valid > 0 ? (__mmask32)((1u << valid) - 1) : 0;
		for (int h = 0; h < 2; h++) {
			const int live = nc - 16 * h;
			const uint16_t* base = w + (size_t)(j0 + 16 * h) * k + pp;
			__m512i r[16];
			for (int c = 0; c < 16; c++)
				r[c] = c < live ? _mm512_maskz_loadu_epi16(cols, base + (size_t)c * k) : _mm512_setzero_si512();
			transpose16(r);
			uint16_t* t = pb + (size_t)s * 1024 + (size_t)h * 512;
			for (int i = 0; i < 16; i++) _mm512_storeu_si512(t + 32 * i, r[i]);
		}
	}
}

// hark_pack_bf16_vnni is pack_bf16 for the AVX-512 BF16 GEMM
// (dpbf16_amd64.c), whose micro-kernel reads the same VNNI panels.
BF16V void hark_pack_bf16_vnni(const uint16_t* w, int k, int pc, int kc, int j0, int nc, uint16_t* pb) {
	pack_bf16(w, k, pc, kc, j0, nc, pb);
}

#ifdef __linux__
// The kernels exist on Linux only (the one OS hark_amx_init grants AMX
// on), so an Intel Mac's compiler never has to know the AMX intrinsics.

typedef struct {
	uint8_t palette, start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} tilecfg;

AMX static void config(void) {
	tilecfg cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
	_tile_loadconfig(&cfg);
}

// vnni_from_f32 converts an f32 panel [kc][32] (the sgemm packers' layout)
// into kc/32 steps of two VNNI tiles (cols 0-15, then 16-31) at pb.
BF16V static void vnni_from_f32(const float* f, int kc, uint16_t* pb) {
	for (int p = 0; p < kc; p += 2) {
		const float* r0 = f + (size_t)p * 32;
		const float* r1 = r0 + 32;
		uint16_t* t = pb + (size_t)(p / 32) * 1024 + (size_t)((p % 32) / 2) * 32;
		_mm512_storeu_si512(t, pair(_mm512_loadu_ps(r0), _mm512_loadu_ps(r1)));
		_mm512_storeu_si512(t + 512, pair(_mm512_loadu_ps(r0 + 16), _mm512_loadu_ps(r1 + 16)));
	}
}

// block runs one 32x32 block of C over steps k steps of 32: C = (load ? C :
// 0) + A·B, A rows at a (stride lda bytes), B the panel's packed steps.
AMX static inline void block(const uint16_t* a, size_t lda, const uint16_t* pb, int steps, float* c, size_t ldc,
                             int load) {
	if (load) {
		_tile_loadd(0, c, ldc);
		_tile_loadd(1, c + 16, ldc);
		_tile_loadd(2, (const char*)c + 16 * ldc, ldc);
		_tile_loadd(3, (const char*)(c + 16) + 16 * ldc, ldc);
	} else {
		_tile_zero(0);
		_tile_zero(1);
		_tile_zero(2);
		_tile_zero(3);
	}
	for (int s = 0; s < steps; s++) {
		_tile_loadd(4, a + 32 * s, lda);
		_tile_loadd(5, (const char*)(a + 32 * s) + 16 * lda, lda);
		_tile_loadd(6, pb + (size_t)s * 1024, 64);
		_tile_loadd(7, pb + (size_t)s * 1024 + 512, 64);
		_tile_dpbf16ps(0, 4, 6);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(2, 5, 6);
		_tile_dpbf16ps(3, 5, 7);
	}
	_tile_stored(0, c, ldc);
	_tile_stored(1, c + 16, ldc);
	_tile_stored(2, (char*)c + 16 * ldc, ldc);
	_tile_stored(3, (char*)(c + 16) + 16 * ldc, ldc);
}

// Weight formats of hark_amx_gemm_t.
enum { AMX_BF16 = 1, AMX_Q = 2, AMX_PQ4 = 3 };

// hark_amx_gemm_t computes columns [j0, j1) (j0 a multiple of 32) of
// C = A·Wᵀ, A = ab (bf16 [mp, kp], mp and kp multiples of 32, zero-padded
// by hark_amx_cvt_a), W [n, k] in one of the formats above:
//   - AMX_BF16: wh, raw bf16;
//   - AMX_Q: MLX quantized w, sc, bi (hark_qgemm_t_ok, k a multiple of 32);
//   - AMX_PQ4: the packed 4-bit layout pq.
// Row blocks below m32 go to c (ldc floats per row); the one partial block
// at m32 (when mp > m32) goes to ct (32 rows of ldc floats). Columns of the
// last panel past n are computed on zero weights and stored, so c's rows
// must be at least the padded width (the Go side pads when n % 32 != 0).
// pb (hark_amx_pb_bytes) and fs (hark_amx_fs_bytes) are the worker's
// scratch.
AMX void hark_amx_gemm_t(int kind, const uint16_t* ab, int mp, int kp, int k, int n, const uint16_t* wh,
                         const uint32_t* w, const float* sc, const float* bi, const uint8_t* pq, int gs, int bits,
                         int j0, int j1, float* c, int ldc, int m32, float* ct, uint16_t* pb, float* fs) {
	config();
	const size_t lda = (size_t)kp * 2, ldcb = (size_t)ldc * 4;
	for (int pc = 0; pc < kp; pc += KCA) {
		const int kc = kp - pc < KCA ? kp - pc : KCA;
		for (int jp = j0; jp < j1; jp += 32) {
			const int nc = n - jp < 32 ? n - jp : 32;
			if (kind == AMX_BF16) {
				pack_bf16(wh, k, pc, kc, jp, nc, pb);
			} else {
				for (int q = 0; q < kc; q += 256) {
					const int qc = kc - q < 256 ? kc - q : 256;
					if (kind == AMX_Q)
						hark_pack_bq512(w, sc, bi, k, gs, bits, pc + q, qc, jp, nc, fs);
					else
						hark_pack_bpq512(pq, k, gs, pc + q, qc, jp, nc, fs);
					vnni_from_f32(fs, qc, pb + (size_t)(q / 32) * 1024);
				}
			}
			for (int i = 0; i < mp; i += 32) {
				float* cb = i < m32 ? c + (size_t)i * ldc + jp : ct + (size_t)(i - m32) * ldc + jp;
				block(ab + (size_t)i * kp + pc, lda, pb, kc / 32, cb, ldcb, pc > 0);
			}
		}
	}
	_tile_release();
}

#else

void hark_amx_gemm_t(int kind, const uint16_t* ab, int mp, int kp, int k, int n, const uint16_t* wh,
                     const uint32_t* w, const float* sc, const float* bi, const uint8_t* pq, int gs, int bits,
                     int j0, int j1, float* c, int ldc, int m32, float* ct, uint16_t* pb, float* fs) {}

#endif
