//go:build !cgo || !(amd64 || arm64)

package kernels

// Without the C kernels the ceilings are Go's: lower than the hardware's,
// and the benchmark table says so by its figures alone.

func ceilingRead(p []float32) float32 {
	var s0, s1, s2, s3 float32
	for i := 0; i+3 < len(p); i += 4 {
		s0, s1, s2, s3 = s0+p[i], s1+p[i+1], s2+p[i+2], s3+p[i+3]
	}
	return s0 + s1 + s2 + s3
}

func ceilingDot8(a []uint8, b []int8, reps int) int32 {
	var s int32
	for range reps {
		for i := range a {
			s += int32(a[i]) * int32(b[i])
		}
	}
	return s
}
