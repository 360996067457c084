//go:build !cgo

package kernels

// hmmVariants: without cgo there is only the Go path.
var hmmVariants = []struct {
	name  string
	force int
}{{"go", 0}}

func setHmmForce(int) {}
