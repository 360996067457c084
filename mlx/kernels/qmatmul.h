// Quantized matmul kernels shared by the C files of package kernels.
#ifndef HARK_QMATMUL_H
#define HARK_QMATMUL_H

#include <stddef.h>
#include <stdint.h>

// An MLX affine-quantized matrix: rows of `cols` codes of `bits` bits,
// packed LSB-first into uint32 words, one scale and bias per `gs` codes.
typedef struct {
	const uint32_t* w;
	const float* scales;
	const float* biases;
	int cols;
	int gs;
	int bits;
} hark_qmat;

// CPU feature bits reported by hark_cpu_features.
enum {
	HARK_CPU_AVX2_FMA = 1,
	HARK_CPU_AVX512F = 2,
	HARK_CPU_NEON = 4,
	HARK_CPU_AVX512VNNI = 8, // with AVX512BW
	HARK_CPU_GFNI = 16,
	HARK_CPU_AVX512VL = 32,
	HARK_CPU_F16C = 64, // with AVX2/FMA: vcvtph2ps for f16 weights
};

int hark_cpu_features(void);

// out[i*ldo + j] = sum_p x[i*k + p] * W[j, p] for rows j in [j0, j1) of a
// quantized W [n, k] (k == q->cols) and all m rows of x. xsum holds the
// per-group sums of x (m * k/gs); xde is x with every hark_q4_chunk()
// values reordered even-first (hark_deinterleave), used by the 4-bit SIMD
// kernels. force selects the float kernel: 0 best available, 1 portable
// C, 2 best without AVX-512 (for tests; xde must then use 16-value
// blocks). The integer 4-bit kernel is reached through hark_q4i24, which
// the Go side calls when it applies (its force 3 means never).
void hark_qmm_t(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                int j0, int j1, float* out, int ldo, int force);

// out[i*ldo + c] = sum_p x[i*k + p] * W[p, c] for columns c in [c0, c1)
// (group-aligned) of a quantized W [k, n] (n == q->cols).
void hark_qmm_n(const float* x, int m, int k, const hark_qmat* q, int c0, int c1, float* out, int ldo);

void hark_group_sums(const float* x, int m, int k, int gs, float* xsum);
void hark_deinterleave(const float* x, int m, int k, int chunk, float* xde);

// hark_q4_chunk is the x reordering block the 4-bit SIMD kernel wants: the
// number of codes it widens at once (16 for AVX2/NEON, 32 for AVX-512).
int hark_q4_chunk(void);

// out[(r-r0)*cols + c] = scale*q + bias (product rounded first, as MLX)
// for rows r in [r0, r1) of a quantized matrix.
void hark_dequant(const hark_qmat* q, int r0, int r1, float* out, int force);

// Architecture kernels; each returns 0 when it does not handle the format
// (the caller then falls back to the portable C kernel).
int hark_qmm_t_simd(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                    int j0, int j1, float* out, int ldo, int no512);

int hark_dequant_simd(const hark_qmat* q, int r0, int r1, float* out);

// The 4-bit × 24-bit-integer decode kernel (qmatmul_i24_amd64.c):
// hark_q4i24_ok says whether it runs for this CPU and shape, _prep writes
// x as digits (xd: m*k*3 bytes, xsv: m*k/8 floats; 0 when x is not all
// finite), and hark_q4i24 computes rows [j0, j1) as hark_qmm_t does.
int hark_q4i24_ok(int k, int gs);
int hark_q4i24_prep(const float* x, int m, int k, int8_t* xd, float* xsv);
int hark_q4i24_prep_sums(const float* x, int m, int k, int gs, int8_t* xd, float* xsv, float* xsum);
void hark_q4i24(const int8_t* xd, const float* xsv, const float* xsum, int m, const hark_qmat* q,
                int j0, int j1, float* out, int ldo);

// The packed 4-bit layout (qpacked.go, qpacked_amd64.c): hark_pq4_ok says
// whether this CPU runs it for rows of k values in groups of gs,
// hark_pq4_tile_bytes is the size of one tile of 4 rows, hark_pq4 computes
// tiles [t0, t1) of an n-row matrix p against m rows of x prepared by
// hark_q4i24_prep (out[i*ldo + row]), and hark_pq4_dequant expands rows
// [r0, r1) to float32 exactly as Dequantize does.
int hark_pq4_ok(int k, int gs);
size_t hark_pq4_tile_bytes(int k, int gs);
void hark_pq4(const int8_t* xd, const float* xsv, const float* xsum, int m, const uint8_t* p, int k, int gs,
              int n, int t0, int t1, float* out, int ldo);
void hark_pq4_dequant(const uint8_t* p, int k, int gs, int r0, int r1, float* out);

// The packed 4-bit kernel on AMX-INT8 for up to 16 rows of x
// (qpacked_amx_amd64.c; the Go side uses it from 4): hark_pq4_amx_ok says
// whether the CPU has it and the OS granted the tile state,
// hark_pq4_amx_cols is the number of 16-column x tiles (nc: one per
// digit), hark_pq4_amx_prep lays x out for it (xb: k/64*nc*1024 bytes,
// cf: k/64*nc*16 floats, xst: k/gs*16 floats), and hark_pq4_amx runs
// tiles [t0, t1) like hark_pq4.
int hark_pq4_amx_ok(void);
int hark_pq4_amx_cols(int m);
void hark_pq4_amx_prep(const int8_t* xd, const float* xsv, const float* xsum, int m, int k, int gs,
                       int8_t* xb, float* cf, float* xst);
void hark_pq4_amx(const int8_t* xb, const float* cf, const float* xst, const int8_t* xd, const float* xsv,
                  const float* xsum, int m, const uint8_t* p, int k, int gs, int n, int t0, int t1, float* out,
                  int ldo);

// DISPATCH_NI calls fn(..., NI, out_, ldo) with NI = ni (1 to 4) as a
// constant, which lets the compiler unroll the row loops of the SIMD
// kernels and keep their accumulators in registers.
#define DISPATCH_NI(fn, ni, ...)                      \
	switch (ni) {                                     \
	case 1: fn(__VA_ARGS__, 1, out_, ldo); break;     \
	case 2: fn(__VA_ARGS__, 2, out_, ldo); break;     \
	case 3: fn(__VA_ARGS__, 3, out_, ldo); break;     \
	default: fn(__VA_ARGS__, 4, out_, ldo); break;    \
	}

#endif
