package cpu

import (
	"runtime"

	"hark/mlx"
	"hark/mlx/kernels"
)

// Describe implements mlx.Describer: the CPU and the kernels this build
// picked for it.
func (cpuBackend) Describe() mlx.DeviceInfo {
	return mlx.DeviceInfo{Device: "cpu", Detail: runtime.GOARCH + ", " + kernels.Features()}
}
