package llmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Shape05B is Qwen2.5-0.5B's shape: the bench model's.
var Shape05B = Shape{Hidden: 896, Layers: 24, Heads: 14, KVHeads: 2, HeadDim: 64, Intermediate: 4864, Vocab: 151936}

// Bench05B writes into dir, unless it already holds them, the q4 0.5B
// bench model (Shape05B as qwen2, random weights in MLX 4-bit, group 64)
// and a plain tokenizer of one token per id, so the engine can load it.
func Bench05B(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := Llama(Shape05B, "qwen2", true).Write(dir, 1, Quant{Bits: 4, GroupSize: 64}); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		return nil
	}
	vocab := make(map[string]int, Shape05B.Vocab)
	for i := range Shape05B.Vocab {
		vocab[fmt.Sprintf("<%d>", i)] = i
	}
	js, err := json.Marshal(map[string]any{"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tokenizer.json"), js, 0o644)
}
