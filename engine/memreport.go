package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// MemoryUse is where a loaded model's memory goes, measured in this
// process after a short greedy generation (so the KV cache and the
// activations exist): the figures issue 19's memory target is checked
// with, and what `hark doctor --model` prints. Bytes; 0 where the OS does
// not say (the process figures come from /proc on Linux).
type MemoryUse struct {
	// File is the checkpoint's size on disk (its .safetensors files).
	File int64 `json:"file"`
	// Weights is what the model holds: Packed of it in the backend's own
	// layout (repacked once at load, the file's layout freed), Mapped of
	// it read in place from the files (expert tensors, quantized matrices
	// the backend does not repack), and the rest copied.
	Weights int64 `json:"weights"`
	Packed  int64 `json:"packed"`
	Mapped  int64 `json:"mapped"`
	// KVCache is the cache after Tokens tokens (prompt and generated).
	KVCache int64 `json:"kvCache"`
	Tokens  int   `json:"tokens"`
	// The process: resident set now (anonymous memory and mapped files'
	// pages) and at its peak, and the Go heap in use.
	RSS      int64 `json:"rss"`
	RSSAnon  int64 `json:"rssAnon"`
	RSSFile  int64 `json:"rssFile"`
	PeakRSS  int64 `json:"peakRSS"`
	GoHeap   int64 `json:"goHeap"`
	ModelRSS int64 `json:"modelFileRSS"` // of RSSFile, the checkpoint's own pages
}

// Libraries is the resident part of mapped files other than the
// checkpoint: the program and its shared libraries.
func (m MemoryUse) Libraries() int64 { return m.RSSFile - m.ModelRSS }

// Other is the anonymous memory beyond the weights held in memory, the KV
// cache and the Go heap in use: activations and scratch buffers outside
// the heap, the heap's free spans not yet returned, stacks, C allocations.
func (m MemoryUse) Other() int64 {
	return m.RSSAnon - (m.Weights - m.Mapped) - m.KVCache - m.GoHeap
}

// PeakRatio is the peak resident set over the file plus the KV cache
// (issue 19's target: at most 1.1), 0 when unknown.
func (m MemoryUse) PeakRatio() float64 {
	if m.PeakRSS == 0 || m.File+m.KVCache == 0 {
		return 0
	}
	return float64(m.PeakRSS) / float64(m.File+m.KVCache)
}

// MeasureMemory generates up to tokens tokens greedily from a short
// prompt, so that the KV cache and activations are in use, and reports
// the memory then. It leaves the conversation cache empty.
func (e *Engine) MeasureMemory(ctx context.Context, tokens int) (MemoryUse, error) {
	info := e.Model.Info()
	m := MemoryUse{Weights: info.WeightBytes, Packed: info.PackedBytes, Mapped: info.MappedBytes, Tokens: tokens}
	files, _ := filepath.Glob(filepath.Join(e.Dir, "*.safetensors"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			m.File += st.Size()
		}
	}
	prompt := e.RawPrompt("Where does the memory go?")
	res, err := e.Generate(ctx, prompt, Options{MaxTokens: tokens}, nil)
	if err != nil {
		return m, fmt.Errorf("measure memory: %w", err)
	}
	m.KVCache, m.Tokens = res.Stats.KVCacheBytes, len(prompt)+res.Stats.GeneratedTokens
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.GoHeap = int64(ms.HeapInuse)
	m.RSS, m.RSSAnon, m.RSSFile, m.PeakRSS = processMemory()
	m.ModelRSS = mappedFileRSS(files)
	e.ResetCache()
	return m, nil
}

// realPath resolves symlinks (a Hugging Face snapshot links to its blobs),
// the name /proc lists a mapping under.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
