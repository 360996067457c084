//go:build !unix

package runner

// processCPU is unavailable here; the per-CPU metrics then read zero.
func processCPU() float64 { return 0 }
