package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"hark/mlx/safetensors"
	"hark/models/nn"
	"hark/models/profile"
)

// Fit is the verdict a model gets before it is loaded: whether the memory
// the engine would ask for is there.
type Fit string

const (
	FitFits   Fit = "fits"    // well within what is available
	FitTight  Fit = "tight"   // loads, with little to spare for other apps
	FitTooBig Fit = "too_big" // Load would refuse it now
)

// tightShare is the part of the budget past which a model is tight.
const tightShare = 0.75

// EstimateOptions choose what an estimate assumes.
type EstimateOptions struct {
	KV nn.KVQuant // zero: DefaultKV (ResolveKV)
	// Context is the tokens of KV cache assumed (0: a long chat, 8,192,
	// or the model's window when shorter).
	Context int
}

// Estimate is what loading the model in dir would take, read from its
// config and safetensors headers only: the same figure Load checks, so
// the Library's verdict and the refusal at load never disagree.
//
// It works for speech models too: without a language model's config keys
// the KV part is 0, and the weights as held plus the margin remain, so a
// caller that keeps several models (the runner) can make room first.
func Estimate(dir string, opt EstimateOptions) (MemoryEstimate, error) {
	e, err := estimate(dir, opt)
	if err != nil {
		return MemoryEstimate{}, fmt.Errorf("estimate %s: %w", dir, err)
	}
	return e, nil
}

func estimate(dir string, opt EstimateOptions) (MemoryEstimate, error) {
	if err := opt.KV.Validate(); err != nil {
		return MemoryEstimate{}, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return MemoryEstimate{}, err
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		return MemoryEstimate{}, err
	}
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		return MemoryEstimate{}, err
	}
	defer set.Close()
	est, err := estimateMemory(set, cfg, opt.Context)
	if err != nil {
		return MemoryEstimate{}, err
	}
	return est.withKV(ResolveKV(opt.KV)), nil
}

// activationMargin is what the estimate adds to the weights for
// activations and the runtime.
func activationMargin(weights int64) int64 { return weights/10 + 64<<20 }

// WeightsOnly is the estimate for weights of the given size when nothing
// else is known yet (a Hub search result before the pull): no KV cache.
func WeightsOnly(weights int64) MemoryEstimate {
	return MemoryEstimate{Weights: weights, Total: weights + activationMargin(weights)}
}

// Verdict compares a model's estimated total with budget (MemoryBudget):
// too big past it, tight past three quarters of it. An unknown budget
// (0) says nothing against the model.
func Verdict(total, budget int64) Fit {
	switch {
	case budget <= 0:
		return FitFits
	case total > budget:
		return FitTooBig
	case float64(total) > tightShare*float64(budget):
		return FitTight
	}
	return FitFits
}

// String says the estimate the way the UI and CLI show it.
func (e MemoryEstimate) String() string {
	return fmt.Sprintf("about %s (weights %s, KV cache %s for %d tokens)", FormatBytes(e.Total), FormatBytes(e.Weights), FormatBytes(e.KVCache), e.Context)
}
