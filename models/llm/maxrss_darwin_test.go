package llm_test

import (
	"syscall"
	"testing"
)

// peakRSS is this process's peak resident set in bytes (macOS reports
// ru_maxrss in bytes).
func peakRSS(t testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Maxrss
}

func rssBreakdown() string { return "" }
