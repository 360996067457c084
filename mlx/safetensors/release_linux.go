package safetensors

import (
	"syscall"
	"unsafe"
)

// pageSize is the granule of madvise.
var pageSize = syscall.Getpagesize()

// releasePages drops the whole pages inside b (a range of a read-only
// file mapping, mapFile) from the resident set. MADV_DONTNEED on a shared
// file mapping discards only this process's page-table entries: the next
// read faults the same bytes back in from the page cache.
func releasePages(b []byte) {
	if len(b) == 0 {
		return
	}
	start := uintptrOf(b)
	lo := (start + uintptr(pageSize) - 1) &^ uintptr(pageSize-1)
	hi := (start + uintptr(len(b))) &^ uintptr(pageSize-1)
	if hi <= lo {
		return
	}
	// Advice: a failure leaves the pages resident, which is only memory.
	_ = syscall.Madvise(b[lo-start:hi-start], syscall.MADV_DONTNEED)
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
