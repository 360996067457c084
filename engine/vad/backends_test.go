package vad

// Tests run on whichever backend mlx.Select picks (HARK_BACKEND), so
// they link every backend Hark ships.
import _ "hark/mlx/backends"
