//go:build !linux && !darwin

package cli

// systemMemory is unknown here.
func systemMemory() (total, available int64) { return 0, 0 }
