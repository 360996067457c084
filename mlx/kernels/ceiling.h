// Hardware ceilings for the benchmark table (ceiling.go): how fast this
// machine reads memory and multiplies int8 at best, with the instructions
// the kernels use.
#include <stddef.h>
#include <stdint.h>

// hark_ceiling_read sums n 64-bit words, wrapping,
// with the widest loads the CPU has, so the sum is bound by memory.
uint64_t hark_ceiling_read(const uint64_t* p, size_t n);

// hark_ceiling_dot8 runs reps int8 dot products of n bytes (n a multiple
// of 64, both in cache) and returns their total, so the time is bound by
// the int8 multiply-add units: VPDPBUSD with AVX-512 VNNI, VPMADDUBSW on
// AVX2, SDOT-free widening multiplies on NEON.
int32_t hark_ceiling_dot8(const uint8_t* a, const int8_t* b, size_t n, size_t reps);
