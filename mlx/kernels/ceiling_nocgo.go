//go:build !cgo || !(amd64 || arm64)

package kernels

// Without the C kernels the ceilings are Go's: lower than the hardware's,
// and the benchmark table says so by its figures alone.

func ceilingRead(w []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+3 < len(w); i += 4 {
		s0, s1, s2, s3 = s0+w[i], s1+w[i+1], s2+w[i+2], s3+w[i+3]
	}
	for ; i < len(w); i++ {
		s0 += w[i]
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
