//go:build !linux

package mlxc_test

import (
	"testing"

	"hark/mlx/mlxc"
)

// threadID has no portable form off Linux; the single-thread check then
// compares nothing.
func threadID(t *testing.T, b *mlxc.Backend) int { return 0 }
