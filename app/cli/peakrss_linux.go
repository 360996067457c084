package cli

import "syscall"

// peakRSS is this process's peak resident set in bytes (Linux reports
// ru_maxrss in KiB); 0 when unknown.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10
}
