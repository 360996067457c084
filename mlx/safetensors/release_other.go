//go:build !linux

package safetensors

// releasePages does nothing where the loader has no per-range advice to
// give (the file may also be a heap copy there, see mmap_other.go).
func releasePages([]byte) {}
