// Package kernels holds the raw-slice compute kernels behind Hark's CPU
// array backend: single-precision GEMM and MLX-compatible affine
// quantization (quantize, dequantize, quantized matmul).
//
// Every function works on plain Go slices in row-major order and never
// allocates tensors of its own beyond scratch space. Fast paths are written
// in C and reached through cgo, chosen at run time from the detected CPU
// features (see Features); a portable Go implementation of every kernel is
// always compiled in, so the package also builds and passes its tests with
// CGO_ENABLED=0.
//
// Backends with cgo:
//   - Sgemm: on amd64 CPUs with AVX-512 a hand-written blocked kernel
//     (12x32 register tile); everything else, and shapes too small for that
//     tile, goes to the system BLAS: Accelerate on macOS, OpenBLAS on Linux.
//     HARK_SGEMM=blas forces the system BLAS.
//   - QMatmul/Dequantize: C kernels, AVX2/FMA or AVX-512 on amd64 (checked
//     at run time), NEON on arm64, portable C elsewhere. Below the batch
//     size that dequantizes to a GEMM, 4-bit weights whose rows are a
//     multiple of 128 values, in groups of a power of two of 64 or more,
//     use AVX-512 VNNI where the CPU has it, with x written as 24-bit fixed point (qmatmul_i24_amd64.c):
//     the same float64 tolerance as the float kernels.
//   - PackedQ4Matmul/PackedQ4Dequantize: the same integer arithmetic on
//     4-bit matrices rewritten by PackQ4 into tiles of 4 rows, codes and
//     scales interleaved (qpacked.go), which every core reads as one
//     stream; AVX-512 VNNI, VL and GFNI only (PackedQ4Supported). Batches
//     of 4 to 16 rows of x (concurrent decode streams) run on AMX-INT8
//     where the CPU has it and Linux grants the tile state
//     (qpacked_amx_amd64.c): each code block is split once for all rows,
//     so a step of 8 streams costs about half the CPU time of VNNI.
//     HARK_PQ4_AMX=0 keeps VNNI.
//   - HMatmul: float32 x times a bf16 or f16 matrix held as raw bits,
//     widened inside the kernels (bf16 by a shift, f16 with F16C on amd64
//     or NEON's conversion on arm64): small batches stream W once, larger
//     ones widen a bounded tile at a time for Sgemm.
//
// Build requirements with cgo: a C compiler (gcc or clang); on Linux the
// OpenBLAS development package (Debian/Ubuntu: libopenblas-dev, which
// provides cblas.h and libopenblas.so; the binary then needs libopenblas0 at
// run time) linked with -lopenblas; on macOS the Accelerate framework
// (part of the SDK). Other cgo platforms use the Go Sgemm and the C
// quantized kernels.
package kernels
