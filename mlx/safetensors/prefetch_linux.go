package safetensors

import "syscall"

// prefetchPages asks the system to start reading m, a whole file mapping
// (page-aligned), into the page cache now, in the background
// (MADV_WILLNEED readahead).
func prefetchPages(m []byte) {
	if len(m) > 0 {
		_ = syscall.Madvise(m, syscall.MADV_WILLNEED) // advice: a failure leaves the reads to first touch
	}
}
