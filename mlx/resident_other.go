//go:build !unix

package mlx

// Without mmap, resident arrays stay on the Go heap.
func mapAnon(int) []byte { return nil }

func unmap([]byte) {}
