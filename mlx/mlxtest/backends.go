package mlxtest

// Every test that uses this package can run on any registered backend:
// HARK_BACKEND=mlxc (with HARK_MLXC pointing at libmlxc) runs the op,
// model and engine tests on MLX. Linking the backend costs nothing where
// the library is absent; it is opened only when selected.
import _ "hark/mlx/mlxc"
