// Package backends links the compute backends Hark ships into a binary;
// import it for its side effect. It is the one list of backends: each
// registers itself with mlx.RegisterBackend, and everything else (the
// choice of backend, Settings, `hark doctor`) asks mlx.Backends.
package backends

import (
	_ "hark/mlx/cpu"  // Hark's own CPU backend
	_ "hark/mlx/mlxc" // Apple's MLX through libmlxc, opened at run time
)
