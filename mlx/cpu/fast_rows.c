// Float32 transcendental loops of the decode path (SiLU of the MLP gate,
// softmax of attention scores), in C so the compiler vectorises them. Go
// computes these in float64 one element at a time, which at decode cost
// more than all the attention arithmetic around them.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd_clones.h"

// Float compares may not be made branch-free under GCC's default
// -ftrapping-math, which keeps these loops scalar; nothing here relies on
// floating-point traps.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

// expf_poly is e^x for x in [-87.3, 88.7] to about one ulp: x = n ln2 + r
// with |r| <= ln2/2 (ln2 split in two so n*ln2 is exact), e^r from Cephes'
// degree-6 minimax polynomial, and 2^n built in the exponent bits. Plain
// arithmetic and no calls, so loops over it vectorise.
static inline __attribute__((always_inline)) float expf_poly(float x) {
	const float log2e = 1.44269504088896341f, ln2hi = 0.693359375f, ln2lo = -2.12194440e-4f;
	x = x > 88.7f ? 88.7f : x;
	x = x < -87.3f ? -87.3f : x;
	// Adding and removing 1.5*2^23 rounds to the nearest integer (ties to
	// even) with plain SSE2 arithmetic, which the vectoriser can use.
	float n = (x * log2e + 12582912.0f) - 12582912.0f;
	float r = (x - n * ln2hi) - n * ln2lo;
	float p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	float e = p * r * r + r + 1.0f;
	int32_t bits = ((int32_t)n + 127) << 23;
	float scale;
	memcpy(&scale, &bits, sizeof scale);
	return e * scale;
}

// r[i] = x[i] * sigmoid(x[i]) = x[i] / (1 + e^-x[i]).
HARK_CLONES void hark_silu_f32(const float* x, float* r, int n) {
	for (int i = 0; i < n; i++) r[i] = x[i] / (1.0f + expf_poly(-x[i]));
}

// r[i] = gelu(x[i]) = x/2 * erfc(-x/sqrt 2), the exact GELU in float32.
// erfc keeps the relative accuracy of the small negative tail that
// 1 + erf would cancel away. erfc(z) for z >= 0 is Numerical Recipes'
// erfcc, t*exp(-z^2 + P(t)) with t = 1/(1 + z/2), within 1.2e-7 relative
// (Chebyshev-fitted), and erfc(-z) = 2 - erfc(z). Plain arithmetic and
// expf_poly, so the loop vectorises: glibc's erfcf, a call per value, took
// 15 ns a value, about a third of a second of CPU per 30 s window of
// Whisper's encoder (21M GELUs in its MLPs and convolutions).
HARK_CLONES void hark_gelu_f32(const float* x, float* r, int n) {
	for (int i = 0; i < n; i++) {
		const float v = x[i];
		const float z = fabsf(v) * 0.70710678118654752f;
		const float t = 1.0f / (1.0f + 0.5f * z);
		float p = 0.17087277f;
		p = p * t - 0.82215223f;
		p = p * t + 1.48851587f;
		p = p * t - 1.13520398f;
		p = p * t + 0.27886807f;
		p = p * t - 0.18628806f;
		p = p * t + 0.09678418f;
		p = p * t + 0.37409196f;
		p = p * t + 1.00002368f;
		p = p * t - 1.26551223f;
		const float e = t * expf_poly(p - z * z);
		r[i] = 0.5f * v * (v < 0 ? e : 2.0f - e);
	}
}

// hark_softmax_f32 writes the softmax of x[0..n) into r and returns 0, or
// returns 1 without writing when the row holds a NaN or +Inf (the caller's
// float64 path decides those). A row of all -Inf gives zeros.
HARK_CLONES int hark_softmax_f32(const float* x, float* r, int n) {
	// Eight running maxima and flags and no early exit, so the scan
	// vectorises; NaN and +Inf are flagged.
	float m8[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
	int bad8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int i0 = 0;
	for (; i0 + 8 <= n; i0 += 8)
		for (int u = 0; u < 8; u++) {
			const float v = x[i0 + u];
			bad8[u] |= (v != v) | (v == INFINITY);
			m8[u] = v > m8[u] ? v : m8[u];
		}
	float m = -INFINITY;
	int bad = 0;
	for (int u = 0; u < 8; u++) {
		bad |= bad8[u];
		m = m8[u] > m ? m8[u] : m;
	}
	for (; i0 < n; i0++) {
		bad |= (x[i0] != x[i0]) | (x[i0] == INFINITY);
		m = x[i0] > m ? x[i0] : m;
	}
	if (bad) return 1;
	if (m == -INFINITY) {
		for (int i = 0; i < n; i++) r[i] = 0;
		return 0;
	}
	// Eight partial sums: a vectorisable reduction without letting the
	// compiler reassociate on its own.
	float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int i = 0;
	for (; i + 8 <= n; i += 8)
		for (int u = 0; u < 8; u++) {
			float e = x[i + u] == -INFINITY ? 0.0f : expf_poly(x[i + u] - m);
			r[i + u] = e;
			acc[u] += e;
		}
	float tail = 0;
	for (; i < n; i++) {
		float e = x[i] == -INFINITY ? 0.0f : expf_poly(x[i] - m);
		r[i] = e;
		tail += e;
	}
	float s = (((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))) + tail;
	float inv = 1.0f / s;
	for (int j = 0; j < n; j++) r[j] *= inv;
	return 0;
}

// hark_rmsnorm_f32 normalises each of rows rows of d values: x / rms(x) * w
// (w may be null). The sum of squares is kept in double, as the Go path
// does, in eight partial sums the vectoriser can use.
HARK_CLONES void hark_rmsnorm_f32(const float* x, const float* w, float* out, int rows, int d, float eps) {
	for (int r = 0; r < rows; r++) {
		const float* row = x + (size_t)r * d;
		float* o = out + (size_t)r * d;
		double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
		int i = 0;
		for (; i + 8 <= d; i += 8)
			for (int u = 0; u < 8; u++) acc[u] += (double)row[i + u] * (double)row[i + u];
		double ss = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
		for (; i < d; i++) ss += (double)row[i] * (double)row[i];
		float inv = (float)(1.0 / sqrt(ss / d + (double)eps));
		if (w) {
			for (int j = 0; j < d; j++) o[j] = (row[j] * inv) * w[j];
		} else {
			for (int j = 0; j < d; j++) o[j] = row[j] * inv;
		}
	}
}
