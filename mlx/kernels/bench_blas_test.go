//go:build cgo && (linux || darwin)

package kernels

import "testing"

// BenchmarkOpenBLASSgemm calls the system BLAS directly (OpenBLAS on Linux,
// Accelerate on macOS) as the yardstick for BenchmarkSgemm.
func BenchmarkOpenBLASSgemm(b *testing.B) { benchSgemm(b, blasSgemm) }
