//go:build cgo

#include <arm_neon.h>
#include "ceiling.h"

// Eight independent integer sums of the 64-bit words, as on amd64: an
// integer add never limits the loads in flight.
uint64_t hark_ceiling_read(const uint64_t* p, size_t n) {
	uint64x2_t a0 = vdupq_n_u64(0), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		a0 = vaddq_u64(a0, vld1q_u64(p + i));
		a1 = vaddq_u64(a1, vld1q_u64(p + i + 2));
		a2 = vaddq_u64(a2, vld1q_u64(p + i + 4));
		a3 = vaddq_u64(a3, vld1q_u64(p + i + 6));
		a4 = vaddq_u64(a4, vld1q_u64(p + i + 8));
		a5 = vaddq_u64(a5, vld1q_u64(p + i + 10));
		a6 = vaddq_u64(a6, vld1q_u64(p + i + 12));
		a7 = vaddq_u64(a7, vld1q_u64(p + i + 14));
	}
	uint64x2_t s = vaddq_u64(vaddq_u64(vaddq_u64(a0, a1), vaddq_u64(a2, a3)), vaddq_u64(vaddq_u64(a4, a5), vaddq_u64(a6, a7)));
	uint64_t sum = vgetq_lane_u64(s, 0) + vgetq_lane_u64(s, 1);
	for (; i < n; i++) sum += p[i];
	return sum;
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
