package engine

import (
	"fmt"
	"strings"

	"hark/mlx"
	"hark/models/nn"
)

// The KV cache may be kept quantized (nn.QuantizedKVCache): LoadOptions.KV
// is the engine's default, sized into the memory estimate, and
// Options.KVBits / KVGroup choose it per generation (a change drops the
// prefix cache, whose positions were stored the other way).

// DefaultKV is how the KV cache is kept when neither LoadOptions.KV nor
// a generation chooses: f16 (nn.KVHalfBits), llama.cpp's default too. It
// halves what decode reads at long contexts against float32 (in the 0.5B
// bench at 4,096 positions, decode keeps about 90% of its speed at 64
// positions, against about 85% with float32), and the memory the
// estimate reserves for a conversation. It keeps every family's greedy
// ids; its logits move by up to 5.8e-3 against llama.cpp's float32-cache
// references (models/llm TestFamiliesMatchLlamaCppHalfKV), so tests
// against those references pin nn.KVFloat32Bits. Batched rows are bit
// for bit what they are alone with either (TestBatchedStepBitForBit; the
// AMX 4-bit kernel is the exception, engine/batch.go).
// ResolveKV is the one place that reads DefaultKV.
var DefaultKV = nn.KVQuant{Bits: nn.KVHalfBits}

// ResolveKV is the cache a setting means: zero, DefaultKV; an explicit
// float32 (nn.KVFloat32Bits), the zero KVQuant the caches take for it.
func ResolveKV(q nn.KVQuant) nn.KVQuant {
	if q == (nn.KVQuant{}) {
		return DefaultKV
	}
	return q.Canonical()
}

// kvFor is the KV setting a generation asks for: its own, else the
// engine's default.
func (e *Engine) kvFor(opt Options) nn.KVQuant {
	if opt.KVBits == 0 && opt.KVGroup == 0 {
		return e.KV
	}
	return nn.KVQuant{Bits: opt.KVBits, Group: opt.KVGroup}.Canonical()
}

// useKV switches the cache to q, checking first that the model's heads
// can be stored that way. Called with e.mu held.
func (e *Engine) useKV(q nn.KVQuant) error {
	if q == e.cacheKV {
		return nil
	}
	if err := e.checkKV(q); err != nil {
		return err
	}
	nn.FreeCaches(e.caches)
	e.caches, e.cached, e.cacheKV = nil, nil, q
	return nil
}

// CheckKV reports whether the model can keep its cache quantized as q,
// naming the valid settings when it cannot.
func (e *Engine) CheckKV(q nn.KVQuant) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Model == nil {
		return fmt.Errorf("kv cache: engine is closed")
	}
	return e.checkKV(q)
}

func (e *Engine) checkKV(q nn.KVQuant) error {
	if err := q.Validate(); err != nil {
		return err
	}
	if !q.Quantized() {
		return nil // float32 and f16 store any shape
	}
	shapeErr := e.probeKV(q)
	if shapeErr == nil {
		return nil
	}
	var valid []string
	for _, g := range nn.KVGroupValues {
		if g != q.GroupSize() && e.probeKV(nn.KVQuant{Bits: q.Bits, Group: g}) == nil {
			valid = append(valid, fmt.Sprint(g))
		}
	}
	if len(valid) == 0 {
		return fmt.Errorf("%w: this model's KV cache cannot be quantized (no group size in %v fits); use kv_bits %d (f16) or %d (float32)", shapeErr, nn.KVGroupValues, nn.KVHalfBits, nn.KVFloat32Bits)
	}
	return fmt.Errorf("%w: for this model use kv_group %s", shapeErr, strings.Join(valid, " or "))
}

// probeKV runs one token through fresh caches quantized as q, which is
// where a cache first sees the shapes of its keys and values, and returns
// the KVShapeError it raises, if any.
func (e *Engine) probeKV(q nn.KVQuant) (err *nn.KVShapeError) {
	cs := nn.QuantizeCaches(e.Model.NewCaches(), q)
	defer nn.FreeCaches(cs)
	defer func() {
		if r := recover(); r != nil {
			se, ok := nn.AsKVShapeError(r)
			if !ok {
				panic(r)
			}
			err = se
		}
	}()
	s := mlx.NewScope()
	defer s.Close()
	h := e.Model.Hidden(mlx.FromSlice([]int{0}, 1, 1), cs)
	if err := mlx.Eval(h); err != nil {
		panic(err)
	}
	return nil
}

// withKV scales the estimate's keys and values (not the recurrent state)
// to the bytes a value takes in q.
func (m MemoryEstimate) withKV(q nn.KVQuant) MemoryEstimate {
	if !q.On() {
		return m
	}
	kv := m.state + int64(float64(m.KVCache-m.state)*q.BytesPerValue()/float64(kvDType.Size()))
	m.Total += kv - m.KVCache
	m.KVCache = kv
	return m
}
