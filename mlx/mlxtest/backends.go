package mlxtest

import (
	"testing"

	"hark/mlx"
)

// EachBackend runs fn as a sub-benchmark or subtest named for each
// registered backend that opens here, with that backend selected, so that
// `make bench` prints the backends side by side; it says why a backend is
// left out (libmlxc missing, say). Whatever fn loads must be loaded inside
// it: arrays keep the backend they were made on. The backend selected
// before is selected again afterwards.
func EachBackend[T interface {
	testing.TB
	Run(string, func(T)) bool
}](t T, fn func(t T)) {
	prev := mlx.DefaultBackend().Name()
	defer func() {
		if err := mlx.SetBackend(prev); err != nil {
			t.Errorf("restoring backend %s: %v", prev, err)
		}
	}()
	for _, name := range mlx.Backends() {
		if _, err := mlx.Probe(name); err != nil {
			t.Logf("backend %s left out: %v", name, err)
			continue
		}
		t.Run(name, func(t T) {
			if err := mlx.SetBackend(name); err != nil {
				t.Fatal(err)
			}
			fn(t)
		})
	}
}
