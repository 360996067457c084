package mlxtest

import (
	"testing"

	"hark/mlx"
)

// NoLeaks makes the test fail unless mlx.LiveArrays() is back to what it
// was at the start when the test ends. Call it first thing in a test. When
// every test does, each one starts and ends at zero; an earlier leak is
// reported once, by the test that caused it, not by every later test.
func NoLeaks(tb testing.TB) {
	tb.Helper()
	base := mlx.LiveArrays()
	tb.Cleanup(func() {
		if n := mlx.LiveArrays() - base; n != 0 {
			tb.Errorf("mlx: %d arrays leaked by this test (%d alive)", n, mlx.LiveArrays())
		}
	})
}
