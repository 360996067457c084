package cli

import (
	"hark/mlx"
	"hark/mlx/kernels"
)

// cpuFeatures is what the cpu backend says of the CPU it runs on. Until
// the cpu backend describes itself (its Describe().Detail, once it lives
// in mlx/cpu), the kernels' own detection says it; this file is the only
// place above mlx that imports the kernels, and goes with that change.
func cpuFeatures() string {
	if info, err := mlx.Probe("cpu"); err == nil && info.Detail != "" {
		return info.Detail
	}
	return kernels.Features()
}
