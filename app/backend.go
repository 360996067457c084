package app

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"hark/mlx"
)

// chooseBackend resolves the compute backend: HARK_BACKEND wins over the
// setting, and "auto" means Metal where it is available, else the CPU.
func chooseBackend(setting string) string {
	name := os.Getenv("HARK_BACKEND")
	if name == "" {
		name = setting
	}
	if name == "" || name == "auto" {
		if slices.Contains(mlx.Backends(), "metal") {
			return "metal"
		}
		return "cpu"
	}
	return name
}

// applyBackend selects the backend for models loaded from now on. A backend
// that fails to start leaves the CPU in place and the reason is returned so
// the UI can show it.
func applyBackend(setting string) (string, error) {
	name := chooseBackend(setting)
	if err := mlx.SetBackend(name); err != nil {
		if name != "cpu" {
			if cpuErr := mlx.SetBackend("cpu"); cpuErr == nil {
				return "cpu", fmt.Errorf("%w; using the CPU instead", err)
			}
		}
		return "", err
	}
	return name, nil
}

// checkBackendSetting rejects a backend this build cannot run.
func checkBackendSetting(setting string) error {
	if setting == "" || setting == "auto" || slices.Contains(mlx.Backends(), setting) {
		return nil
	}
	return fmt.Errorf("backend %q is not available in this build (available: auto, %s)", setting, strings.Join(mlx.Backends(), ", "))
}
