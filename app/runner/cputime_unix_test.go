//go:build unix

package runner

import "syscall"

// processCPU returns the user+system CPU time of the process in seconds,
// so benchmarks can report throughput per CPU-second: on a shared machine
// wall-clock rates swing with other load, CPU time much less.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
