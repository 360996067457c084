package llm

import (
	"fmt"
	"os"
	"path/filepath"

	"hark/mlx/safetensors"
	"hark/models/nn"
	"hark/models/profile"
)

// Open reads config.json and the safetensors weights (one file or a sharded
// index) of the model in dir and builds its graph. It does no memory
// check; package engine does that before calling it.
func Open(dir string) (Model, *profile.Config, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("load model: %w", err)
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	defer set.Close()
	m, err := New(cfg, nn.NewWeights(set, cfg.Quant))
	if err != nil {
		return nil, nil, fmt.Errorf("load model %s: %w", dir, err)
	}
	return m, cfg, nil
}
