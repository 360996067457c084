//go:build cgo && (linux || darwin)

package kernels

// On amd64 the AVX-512 kernel beats the system BLAS as shipped by Debian
// (OpenBLAS 0.3.21 falls back to its Prescott kernels on new CPUs unless
// OPENBLAS_CORETYPE is set); with AVX2 only, OpenBLAS's Haswell kernels are
// at least as fast as ours, so BLAS keeps those CPUs.
func init() {
	if haveAVX512 {
		ownSgemm, ownSgemmName = sgemmAVX512, "own avx512 12x32"
		ownSgemmSerial = sgemmAVX512Serial
	}
}
