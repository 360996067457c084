package engine

import (
	"fmt"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/nn"
	"hark/models/profile"
)

// MemoryEstimate is what loading a model is expected to take.
type MemoryEstimate struct {
	Weights   int64 // as held in memory (nn.HeldDType)
	KVCache   int64 // for Context tokens
	Context   int
	Total     int64
	Available int64 // 0 when unknown
	// state is the part of KVCache the linear-attention layers' fixed
	// state takes: kept in float32 whatever the KV setting, so withKV
	// scales only the rest.
	state int64
}

// estimateContext is the context the KV part of the estimate assumes: a
// long chat, not the model's full window, which few conversations reach.
const estimateContext = 8192

// kvDType is the dtype of the KV cache: the activations', which are
// float32 whatever the weights' dtype (16-bit embedding rows are widened,
// and matmuls with 16-bit weights give float32).
const kvDType = mlx.Float32

// estimateMemory sums the checkpoint's tensors as the loader will hold them
// and a KV cache for context tokens (0: a long conversation), plus a
// margin for activations.
func estimateMemory(set *safetensors.Set, cfg *profile.Config, context int) (MemoryEstimate, error) {
	var e MemoryEstimate
	for _, n := range set.Names() {
		info, err := set.Tensor(n)
		if err != nil {
			return e, err
		}
		size := info.Size
		if dt, err := mlx.ParseDType(string(info.DType)); err == nil {
			size = int64(mlx.ShapeSize(info.Shape)) * int64(nn.HeldDType(n, dt, info.Shape).Size())
		}
		e.Weights += size
	}
	raw := cfg.Raw
	if tc, ok := raw["text_config"].(map[string]any); ok {
		raw = tc
	}
	layers, heads := intField(raw, "num_hidden_layers"), intField(raw, "num_attention_heads")
	kv, hd, hidden := intField(raw, "num_key_value_heads"), intField(raw, "head_dim"), intField(raw, "hidden_size")
	if kv == 0 {
		kv = heads
	}
	if hd == 0 && heads > 0 {
		hd = hidden / heads
	}
	e.Context = estimateContext
	if context > 0 {
		e.Context = context
	} else if cfg.ContextLength > 0 && cfg.ContextLength < e.Context {
		e.Context = cfg.ContextLength
	}
	linear, state := recurrentLayers(raw)
	e.state = int64(linear) * state
	e.KVCache = int64(2*(layers-linear)*kv*hd*kvDType.Size())*int64(e.Context) + e.state
	e.Total = e.Weights + e.KVCache + activationMargin(e.Weights)
	return e, nil
}

// recurrentLayers counts the linear-attention layers of a hybrid model
// (Qwen3.5's Gated DeltaNet, layer_types "linear_attention"), which keep
// a fixed-size state instead of keys and values per position, and the
// bytes of that state per layer: the delta rule's matrix per value head
// and the convolution's last kernel-1 inputs.
func recurrentLayers(raw map[string]any) (layers int, stateBytes int64) {
	types, _ := raw["layer_types"].([]any)
	for _, t := range types {
		if t == "linear_attention" {
			layers++
		}
	}
	kh, vh := intField(raw, "linear_num_key_heads"), intField(raw, "linear_num_value_heads")
	kd, vd, k := intField(raw, "linear_key_head_dim"), intField(raw, "linear_value_head_dim"), intField(raw, "linear_conv_kernel_dim")
	conv := int64(max(k-1, 0)) * int64(2*kh*kd+vh*vd)
	return layers, (int64(vh*kd*vd) + conv) * int64(kvDType.Size())
}

func intField(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case interface{ Int64() (int64, error) }:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// memoryAvailable is availableMemory, swappable by tests.
var memoryAvailable = availableMemory

// MemoryBudget is the memory a model may still take, the figure Load
// checks a model's estimate against: what the system has available, plus
// what the backend's own allocator keeps cached for reuse (the system
// counts that as used); 0 when the system does not say. `hark doctor`
// reports it.
func MemoryBudget() int64 {
	avail := memoryAvailable()
	if avail > 0 {
		_, cached := mlx.DeviceMemory()
		avail += cached
	}
	return avail
}

// deviceAvailable is MemoryBudget, and bounds the backend's allocator to
// it, so MLX fails one request with an error instead of pushing the
// system into swap or the OOM killer; the cache may keep an eighth.
func deviceAvailable() int64 {
	avail := MemoryBudget()
	if avail > 0 {
		active, _ := mlx.DeviceMemory()
		mlx.LimitDeviceMemory(active+avail, avail/8)
	}
	return avail
}

// checkFits refuses a model that would not fit in the memory available.
func checkFits(e MemoryEstimate) error {
	if e.Available > 0 && e.Total > e.Available {
		return fmt.Errorf("model needs about %s of memory (weights %s, KV cache %s for %d tokens) but only %s is available; choose a smaller or more quantized model",
			FormatBytes(e.Total), FormatBytes(e.Weights), FormatBytes(e.KVCache), e.Context, FormatBytes(e.Available))
	}
	return nil
}

// FormatBytes formats a byte count in GB (10^9), or MB below one GB: the units
// the UI and the CLI use.
func FormatBytes(n int64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
