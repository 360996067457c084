//go:build unix

package llm_test

import "syscall"

// processCPU returns the user+system CPU time of the process in seconds:
// on a shared machine a step's wall time swings with other load, the CPU
// time it takes much less.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
