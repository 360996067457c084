//go:build !linux

package llm_test

// residentBytes is unknown here; the benchmark then leaves RSS out.
func residentBytes() int64 { return 0 }
