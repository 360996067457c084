//go:build cgo

// NEON quantized-matmul kernel for arm64 (NEON is part of the baseline
// ARMv8-A ISA, so no run-time check is needed). Only 4-bit codes take this
// path; everything else uses the portable C kernel.

#include <arm_neon.h>
#include <stddef.h>
#include "qmatmul.h"

int hark_cpu_features(void) { return HARK_CPU_NEON; }

int hark_q4_chunk(void) { return 16; }

// q4_row computes one output for one row of x: per 8 packed bytes (16
// codes), low nibbles are the even codes and high nibbles the odd ones,
// matched against x in the even-first order of xde:
//   xde[c+0..3] = x[c+0,2,4,6]    xde[c+4..7]   = x[c+8,10,12,14]
//   xde[c+8..11] = x[c+1,3,5,7]   xde[c+12..15] = x[c+9,11,13,15]
static float q4_row(const uint8_t* wb, const float* sc, const float* bi, const float* xde,
                    const float* xsum, int k, int gs) {
	const int gpr = k / gs;
	float32x4_t acc = vdupq_n_f32(0);
	float bsum = 0;
	for (int g = 0; g < gpr; g++) {
		float32x4_t ga = vdupq_n_f32(0);
		const uint8_t* gb = wb + (size_t)g * gs / 2;
		const float* xg = xde + (size_t)g * gs;
		for (int c = 0; c < gs; c += 16) {
			uint16x8_t v = vmovl_u8(vld1_u8(gb + c / 2));
			uint16x8_t lo = vandq_u16(v, vdupq_n_u16(0xF));
			uint16x8_t hi = vshrq_n_u16(v, 4);
			float32x4_t q0 = vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo)));
			float32x4_t q1 = vcvtq_f32_u32(vmovl_u16(vget_high_u16(lo)));
			float32x4_t q2 = vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi)));
			float32x4_t q3 = vcvtq_f32_u32(vmovl_u16(vget_high_u16(hi)));
			ga = vfmaq_f32(ga, q0, vld1q_f32(xg + c));
			ga = vfmaq_f32(ga, q1, vld1q_f32(xg + c + 4));
			ga = vfmaq_f32(ga, q2, vld1q_f32(xg + c + 8));
			ga = vfmaq_f32(ga, q3, vld1q_f32(xg + c + 12));
		}
		acc = vfmaq_n_f32(acc, ga, sc[g]);
		bsum += bi[g] * xsum[g];
	}
	return vaddvq_f32(acc) + bsum;
}

int hark_qmm_t_simd(const float* x, const float* xde, const float* xsum, int m, const hark_qmat* q,
                    int j0, int j1, float* out, int ldo, int no512) {
	(void)x, (void)no512;
	if (q->bits != 4 || xde == NULL) return 0;
	const int k = q->cols, gs = q->gs, gpr = k / gs, wpr = k / 8;
	for (int j = j0; j < j1; j++) {
		const uint8_t* wb = (const uint8_t*)(q->w + (size_t)j * wpr);
		for (int i = 0; i < m; i++)
			out[(size_t)i * ldo + j] = q4_row(wb, q->scales + (size_t)j * gpr, q->biases + (size_t)j * gpr,
			                                  xde + (size_t)i * k, xsum + (size_t)i * gpr, k, gs);
	}
	return 1;
}

// No NEON dequantize kernel: the portable loop is used on arm64.
int hark_dequant_simd(const hark_qmat* q, int r0, int r1, float* out) {
	(void)q, (void)r0, (void)r1, (void)out;
	return 0;
}
