// Package cpu is Hark's own compute backend: Go, with C through cgo for
// the hot loops (mlx/kernels: GEMM, quantized matmuls, attention rows). It
// computes every op eagerly when the op is called, so mlx.Eval has nothing
// to do, and it registers itself as "cpu". Nothing outside mlx/backends
// imports it: models and the engine only see package mlx.
//
// Storage is a reference-counted typed slice (cpuBuf) or a strided view
// onto one (cpuView); weights can live off the Go heap (MakeResident), and
// 4-bit matrices can be rewritten into the packed layout of the decode
// kernel (PackQuant). Float16 and bfloat16 are computed in float32 and
// rounded once, as package mlx documents.
package cpu
