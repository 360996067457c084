//go:build unix

package mlx

import "syscall"

// mapAnon returns n bytes of private anonymous memory, or nil.
func mapAnon(n int) []byte {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return mem
}

func unmap(mem []byte) { _ = syscall.Munmap(mem) }
