package llm_test

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// evictFile drops path's clean pages from the page cache (nobody may
// have it mapped, or those pages stay), as after a reboot, without root
// and without touching any other file's cache.
func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// cpuTime is the CPU time (user and system) this process has used: on a
// machine shared with other work, a steadier measure of a load's cost
// than its wall time.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
