//go:build cgo

#include <immintrin.h>
#include "ceiling.h"

__attribute__((target("avx2"))) static float read_avx2(const float* p, size_t n) {
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
	for (size_t i = 0; i < n; i += 64) {
		// 256 bytes a step, four cache lines: enough loads in flight
		s0 = _mm256_add_ps(s0, _mm256_add_ps(_mm256_load_ps(p + i), _mm256_load_ps(p + i + 8)));
		s1 = _mm256_add_ps(s1, _mm256_add_ps(_mm256_load_ps(p + i + 16), _mm256_load_ps(p + i + 24)));
		s2 = _mm256_add_ps(s2, _mm256_add_ps(_mm256_load_ps(p + i + 32), _mm256_load_ps(p + i + 40)));
		s3 = _mm256_add_ps(s3, _mm256_add_ps(_mm256_load_ps(p + i + 48), _mm256_load_ps(p + i + 56)));
	}
	__m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
	float t[8];
	_mm256_storeu_ps(t, s);
	return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}

static float read_scalar(const float* p, size_t n) {
	float s = 0;
	for (size_t i = 0; i < n; i++) s += p[i];
	return s;
}

float hark_ceiling_read(const float* p, size_t n) {
	if (__builtin_cpu_supports("avx2")) return read_avx2(p, n);
	return read_scalar(p, n);
}

// dot8_vnni: each 512 bytes of a and b stay in registers for all the
// repetitions (the compiler hoists both loads), so the loop times the
// VPDPBUSD rate alone, the compute ceiling. Loading both operands per
// VPDPBUSD bound it by the load ports instead, at half that rate on Zen 4,
// and the int8 packed kernel (one load per VPDPBUSD) measured above that
// "ceiling". Eight chains hide the latency; the sum is the same.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int32_t dot8_vnni(const uint8_t* a, const int8_t* b, size_t n, size_t reps) {
	__m512i s[8], av[8];
	for (int c = 0; c < 8; c++) s[c] = _mm512_setzero_si512();
	for (size_t i = 0; i < n; i += 512) {
		for (int c = 0; c < 8; c++) av[c] = _mm512_loadu_si512(a + i + 64 * c);
		for (size_t r = 0; r < reps; r++) {
			for (int c = 0; c < 8; c++) s[c] = _mm512_dpbusd_epi32(s[c], av[c], _mm512_loadu_si512(b + i + 64 * c));
		}
	}
	for (int c = 1; c < 8; c++) s[0] = _mm512_add_epi32(s[0], s[c]);
	return _mm512_reduce_add_epi32(s[0]);
}

__attribute__((target("avx2"))) static int32_t dot8_avx2(const uint8_t* a, const int8_t* b, size_t n, size_t reps) {
	const __m256i one = _mm256_set1_epi16(1);
	__m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
	for (size_t r = 0; r < reps; r++) {
		for (size_t i = 0; i < n; i += 128) {
			__m256i p0 = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i*)(a + i)), _mm256_loadu_si256((const __m256i*)(b + i)));
			__m256i p1 = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i*)(a + i + 32)), _mm256_loadu_si256((const __m256i*)(b + i + 32)));
			__m256i p2 = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i*)(a + i + 64)), _mm256_loadu_si256((const __m256i*)(b + i + 64)));
			__m256i p3 = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i*)(a + i + 96)), _mm256_loadu_si256((const __m256i*)(b + i + 96)));
			s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(p0, one));
			s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(p1, one));
			s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(p2, one));
			s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(p3, one));
		}
	}
	__m256i s = _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3));
	int32_t t[8];
	_mm256_storeu_si256((__m256i*)t, s);
	return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}

int32_t hark_ceiling_dot8(const uint8_t* a, const int8_t* b, size_t n, size_t reps) {
	if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") && n % 512 == 0) return dot8_vnni(a, b, n, reps);
	if (__builtin_cpu_supports("avx2")) return dot8_avx2(a, b, n, reps);
	int32_t s = 0;
	for (size_t r = 0; r < reps; r++)
		for (size_t i = 0; i < n; i++) s += (int32_t)a[i] * b[i];
	return s;
}
