// Package kernels holds the raw-slice compute kernels behind Hark's CPU
// array backend: single-precision GEMM and MLX-compatible affine
// quantization (quantize, dequantize, quantized matmul).
//
// Every function works on plain Go slices in row-major order and never
// allocates tensors of its own beyond scratch space. Fast paths are written
// in C and reached through cgo (BLAS for Sgemm, hand-written SIMD for the
// quantized kernels, chosen at run time from the detected CPU features); a
// portable Go implementation of every kernel is always compiled in, so the
// package also builds and passes its tests with CGO_ENABLED=0.
package kernels
