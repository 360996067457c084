package engine

import "golang.org/x/sys/unix"

// availableMemory is hw.memsize: on Apple silicon memory is unified and
// macOS compresses and pages freely, so the physical size, not the momentary
// free count, is what a model can use.
func availableMemory() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}
