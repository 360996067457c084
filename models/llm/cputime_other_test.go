//go:build !unix

package llm_test

// processCPU is 0 where getrusage is missing: no CPU-time ratios.
func processCPU() float64 { return 0 }
