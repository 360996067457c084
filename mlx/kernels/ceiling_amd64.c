//go:build cgo

#include <immintrin.h>
#include "ceiling.h"

// read_avx2 adds the buffer's 64-bit words into eight independent integer
// sums, one 256-bit load each, 256 bytes a step, as the C streaming-read
// probe the ceiling is checked against does. Integer adds take one
// cycle, so no add chain can limit the loads in flight, as the float adds
// (four cycles each) it replaced could.
__attribute__((target("avx2"))) static uint64_t read_avx2(const uint64_t* p, size_t n) {
	const __m256i* v = (const __m256i*)p;
	size_t nv = n / 4, i = 0;
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	for (; i + 8 <= nv; i += 8) {
		a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(v + i));
		a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(v + i + 1));
		a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(v + i + 2));
		a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(v + i + 3));
		a4 = _mm256_add_epi64(a4, _mm256_loadu_si256(v + i + 4));
		a5 = _mm256_add_epi64(a5, _mm256_loadu_si256(v + i + 5));
		a6 = _mm256_add_epi64(a6, _mm256_loadu_si256(v + i + 6));
		a7 = _mm256_add_epi64(a7, _mm256_loadu_si256(v + i + 7));
	}
	__m256i s = _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
	                             _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
	uint64_t t[4];
	_mm256_storeu_si256((__m256i*)t, s);
	uint64_t sum = t[0] + t[1] + t[2] + t[3];
	for (i *= 4; i < n; i++) sum += p[i];
	return sum;
}

static uint64_t read_scalar(const uint64_t* p, size_t n) {
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++) s += p[i];
	return s;
}

uint64_t hark_ceiling_read(const uint64_t* p, size_t n) {
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
