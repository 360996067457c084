package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"hark/mlx/safetensors"
	"hark/models/profile"
)

// EstimateMemory is what loading the model in dir would take, read from
// its config and safetensors headers without loading any weight, so a
// caller that keeps several models (the runner) can make room first. For a
// speech model (no language-model config keys) it is the weights as held
// plus the same margin; the KV part is then 0.
func EstimateMemory(dir string) (MemoryEstimate, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return MemoryEstimate{}, fmt.Errorf("estimate %s: %w", dir, err)
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		return MemoryEstimate{}, fmt.Errorf("estimate %s: %w", dir, err)
	}
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		return MemoryEstimate{}, fmt.Errorf("estimate %s: %w", dir, err)
	}
	defer set.Close()
	est, err := estimateMemory(set, cfg)
	if err != nil {
		return MemoryEstimate{}, fmt.Errorf("estimate %s: %w", dir, err)
	}
	return est, nil
}
