package kernels

import "testing"

// withoutAMX turns the AMX path off for one test: the tests of the float32
// kernels hold them to float32 error bounds, which the AMX path (x rounded
// to bf16) does not meet and is not meant to; it has its own tests with
// the bf16 bound (amx_amd64_test.go).
// The AVX-512 BF16 path (dpbf16.go) rounds x the same way and goes too.
func withoutAMX(t testing.TB) {
	was, wasDP := haveAMX, haveDPBF16
	haveAMX, haveDPBF16 = false, false
	t.Cleanup(func() { haveAMX, haveDPBF16 = was, wasDP })
}
