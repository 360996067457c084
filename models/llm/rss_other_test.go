//go:build !linux

package llm_test

// residentBytes is unknown here; the benchmark then leaves RSS out.
func residentBytes() int64 { return 0 }

// fileBytes is unknown here too.
func fileBytes(string) int64 { return 0 }

// anonBytes is unknown here too.
func anonBytes() int64 { return 0 }
