//go:build cgo

#include <arm_neon.h>
#include "ceiling.h"

float hark_ceiling_read(const float* p, size_t n) {
	float32x4_t s0 = vdupq_n_f32(0), s1 = s0, s2 = s0, s3 = s0;
	for (size_t i = 0; i < n; i += 16) {
		s0 = vaddq_f32(s0, vld1q_f32(p + i));
		s1 = vaddq_f32(s1, vld1q_f32(p + i + 4));
		s2 = vaddq_f32(s2, vld1q_f32(p + i + 8));
		s3 = vaddq_f32(s3, vld1q_f32(p + i + 12));
	}
	return vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
}

int32_t hark_ceiling_dot8(const uint8_t* a, const int8_t* b, size_t n, size_t reps) {
	int32x4_t s0 = vdupq_n_s32(0), s1 = s0;
	for (size_t r = 0; r < reps; r++) {
		for (size_t i = 0; i < n; i += 32) {
			// a is taken below 128 (ceiling.go fills it so), so as signed
			int8x16_t a0 = vreinterpretq_s8_u8(vld1q_u8(a + i)), a1 = vreinterpretq_s8_u8(vld1q_u8(a + i + 16));
			int8x16_t b0 = vld1q_s8(b + i), b1 = vld1q_s8(b + i + 16);
			s0 = vpadalq_s16(s0, vmull_s8(vget_low_s8(a0), vget_low_s8(b0)));
			s0 = vpadalq_s16(s0, vmull_high_s8(a0, b0));
			s1 = vpadalq_s16(s1, vmull_s8(vget_low_s8(a1), vget_low_s8(b1)));
			s1 = vpadalq_s16(s1, vmull_high_s8(a1, b1));
		}
	}
	return vaddvq_s32(vaddq_s32(s0, s1));
}
