package mlxc_test

// Parity compares with the cpu backend, so the tests link every backend.
import _ "hark/mlx/backends"
