package cli

import (
	"context"
	"fmt"
	"time"

	"hark/engine"
)

// doctorTokens is how long a generation hark doctor --model runs before
// measuring, so that the KV cache and the activations are in use.
const doctorTokens = 32

// modelMemory is hark doctor --model's report: where a loaded model's
// memory goes (engine.MemoryUse) and the time the load took.
type modelMemory struct {
	Dir string `json:"dir"`
	engine.MemoryUse
	// Libraries is the program's and its libraries' resident pages; Other
	// the anonymous memory beyond weights, KV cache and Go heap
	// (activations, scratch, free heap spans, stacks, C allocations).
	Libraries int64 `json:"libraries"`
	Other     int64 `json:"other"`
	// PeakRatio is the peak resident set over file + KV cache (issue 19's
	// memory target: at most 1.1); 0 when unknown.
	PeakRatio float64 `json:"peakRatio"`
	LoadMS    int64   `json:"loadMs"`
}

// measureModel loads the model id names, as hark chat would, and measures.
func measureModel(ctx context.Context, id string) (*modelMemory, error) {
	dir, err := chatModelDir(ctx, id)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	e, err := engine.Load(dir, engine.LoadOptions{})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	load := time.Since(start)
	m, err := e.MeasureMemory(ctx, doctorTokens)
	if err != nil {
		return nil, err
	}
	return &modelMemory{Dir: dir, MemoryUse: m, Libraries: m.Libraries(), Other: m.Other(), PeakRatio: m.PeakRatio(), LoadMS: load.Milliseconds()}, nil
}

func (m *modelMemory) write(line func(k, format string, a ...any)) {
	line("model", "%s (loaded in %d ms)", m.Dir, m.LoadMS)
	line("  file", "%s", humanBytes(m.File))
	line("  weights", "%s held: %s repacked into the backend's layout (the file's layout freed), %s mapped from the file, %s copied",
		humanBytes(m.Weights), humanBytes(m.Packed), humanBytes(m.Mapped), humanBytes(m.Weights-m.Packed-m.Mapped))
	line("  KV cache", "%s after %d tokens", humanBytes(m.KVCache), m.Tokens)
	if m.RSS == 0 {
		line("  process", "unknown on this OS")
		return
	}
	line("  process", "%s resident (%s anonymous, %s mapped files), peak %s", humanBytes(m.RSS), humanBytes(m.RSSAnon), humanBytes(m.RSSFile), humanBytes(m.PeakRSS))
	line("    weights in memory", "%s", humanBytes(m.Weights-m.Mapped))
	line("    checkpoint pages", "%s resident through mappings", humanBytes(m.ModelRSS))
	line("    KV cache", "%s", humanBytes(m.KVCache))
	line("    Go heap", "%s in use", humanBytes(m.GoHeap))
	line("    other anonymous", "%s (activations, scratch, free heap spans, stacks, C allocations)", signedBytes(m.Other))
	line("    program, libraries", "%s", signedBytes(m.Libraries))
	line("  peak / (file + KV)", "%.2f (target at most 1.10)", m.PeakRatio)
}

// signedBytes is humanBytes for a figure that may come out negative (a
// difference of measurements taken moments apart).
func signedBytes(n int64) string {
	if n < 0 {
		return fmt.Sprintf("-%s", humanBytes(-n))
	}
	return humanBytes(n)
}
