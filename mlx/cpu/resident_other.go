//go:build !unix

package cpu

// Without mmap, resident arrays stay on the Go heap.
func mapAnon(int) (data, mapping []byte) { return nil, nil }

func unmap([]byte) error { return nil }
