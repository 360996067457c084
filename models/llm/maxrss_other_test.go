//go:build !linux && !darwin

package llm_test

import "testing"

func peakRSS(t testing.TB) int64 {
	t.Skip("peak RSS is read with getrusage on Linux and macOS only")
	return 0
}

func rssBreakdown() string { return "" }
