//go:build !unix

package llm_test

// processCPU is unavailable here; the per-CPU metrics then read zero.
func processCPU() float64 { return 0 }
