package engine

import (
	"os"
	"path/filepath"
	"testing"

	"hark/models/llm/llmtest"
)

// glm4MoeBatchCase is a generated GLM-4.5-style checkpoint (glm4_moe has
// no golden) with stories260K's tokenizer: the batch serves it through
// the Llama attention (q/k/v biases, half-rotary RoPE at each row's
// position) and its group-limited router, which rows use independently.
func glm4MoeBatchCase(t *testing.T, stories string) batchCase {
	t.Helper()
	dir := t.TempDir()
	s := llmtest.Tiny
	s.Vocab = 512 // stories260K's
	gen := llmtest.GLM4Moe(s, 8, 2, false)
	gen.Config["n_group"], gen.Config["topk_group"] = 4, 2
	if err := gen.Write(dir, 3, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(stories, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return batchCase{"glm4_moe", dir, [][]int{{1, 403}, {1, 403, 9, 57, 300, 42, 11}, {1, 250, 12}, {1, 76, 88, 301, 4, 22, 9, 10, 411, 5, 77}, {1, 9}}}
}
