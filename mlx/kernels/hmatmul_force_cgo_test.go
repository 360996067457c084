//go:build cgo

package kernels

// hmmVariants are the kernel choices the tests run: the best for this CPU
// and the portable C loops.
var hmmVariants = []struct {
	name  string
	force int
}{{"best", 0}, {"portable-c", 1}}

func setHmmForce(f int) { hmmForce = f }
