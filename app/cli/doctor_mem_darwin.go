package cli

import "golang.org/x/sys/unix"

// systemMemory is hw.memsize for both: on Apple silicon memory is unified
// and macOS compresses and pages freely, so the physical size is what the
// engine counts as available (engine/memory_darwin.go).
func systemMemory() (total, available int64) {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, 0
	}
	return int64(n), int64(n)
}
