//go:build unix && !linux

package cpu

import "syscall"

// mapAnon returns n bytes of private anonymous memory (data) and the
// mapping that holds them, for unmap; nils when mmap fails. macOS and the
// BSDs take no per-range huge-page advice, so the two are one.
func mapAnon(n int) (data, mapping []byte) {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	return mem, mem
}

func unmap(mapping []byte) error { return syscall.Munmap(mapping) }
