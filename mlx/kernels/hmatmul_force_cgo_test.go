//go:build cgo

package kernels

// hmmVariants are the kernel choices the tests run: the best for this CPU
// (AVX-512 where the CPU has it), the best without AVX-512, and the
// portable C loops.
var hmmVariants = []struct {
	name  string
	force int
}{{"best", 0}, {"no-avx512", 2}, {"portable-c", 1}}

func setHmmForce(f int) { hmmForce = f }
