package cpu

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a huge page on x86-64 and arm64 Linux.
const hugePage = 2 << 20

// mapAnon returns n bytes of private anonymous memory (data) and the
// mapping that holds them, for unmap; nils when mmap fails.
//
// Decode streams every weight once per token, a new 4 KB page every few
// hundred nanoseconds: each costs a TLB miss (a two-level walk under a
// hypervisor) and stops the hardware prefetcher, which does not cross
// pages. So data of 2 MB or more starts on a 2 MB boundary and asks for
// transparent huge pages, which Linux grants when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" (Debian's
// default) or "always". Decode ran about 5% faster on the CI machine. The
// alignment slack (under 2 MB of address space, never touched, so never
// resident) stays mapped: unmapping part of a mapping would leave a hole
// another mapping could take before unmap releases the whole.
func mapAnon(n int) (data, mapping []byte) {
	size := n
	if n >= hugePage {
		size += hugePage
	}
	mapping, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	if n < hugePage {
		return mapping, mapping
	}
	off := int((hugePage - uintptr(unsafe.Pointer(&mapping[0]))%hugePage) % hugePage)
	data = mapping[off : off+n : off+n]
	_ = syscall.Madvise(data, syscall.MADV_HUGEPAGE) // advice: without it the pages are small
	return data, mapping
}

func unmap(mapping []byte) error { return syscall.Munmap(mapping) }
