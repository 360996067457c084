//go:build !linux

package safetensors

// prefetchPages does nothing where the loader gives no advice.
func prefetchPages([]byte) {}
