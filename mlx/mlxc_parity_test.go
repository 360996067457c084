package mlx_test

import (
	"os"
	"testing"
)

// Op parity against Apple's MLX through libmlxc: when HARK_MLXC points to
// the library, the Metal backend issue runs every op on both backends and
// compares results. This package has no libmlxc loader yet, so with the
// variable set the test fails instead of passing vacuously.
func TestMLXCParity(t *testing.T) {
	leakFree(t)
	path := os.Getenv("HARK_MLXC")
	if path == "" {
		t.Skip("HARK_MLXC is not set: op parity against a real libmlxc needs that library (macOS, built from mlx-c); set HARK_MLXC=/path/to/libmlxc.dylib to run it")
	}
	t.Fatalf("HARK_MLXC=%s is set, but no libmlxc backend is registered in this build (available: cpu); parity cannot run", path)
}
