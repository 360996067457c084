package mlxc_test

import (
	"context"
	"syscall"
	"testing"

	"hark/mlx/mlxc"
)

func threadID(t *testing.T, b *mlxc.Backend) int {
	var tid int
	if err := b.Do(context.Background(), func() error { tid = syscall.Gettid(); return nil }); err != nil {
		t.Fatal(err)
	}
	return tid
}
