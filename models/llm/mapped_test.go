package llm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/nn"
	"hark/models/profile"
)

// Stacked expert tensors stay mapped from the checkpoint (every byte of
// them, nothing else), the model computes exactly what the same checkpoint
// loaded by copying computes, and it keeps working after the loader has
// closed the files (the mappings are the arrays' own).
func TestExpertsStayMapped(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(10, llmtest.Tiny.Vocab)
	gptOSS := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
	for _, c := range []struct {
		name string
		gen  llmtest.Model
		q    llmtest.Quant
	}{
		{"qwen3_moe-stacked", llmtest.MoE(llmtest.Tiny, "qwen3_moe", 8, 2, true), llmtest.Quant{}},
		{"qwen3_moe-stacked-q4", llmtest.MoE(llmtest.Tiny, "qwen3_moe", 8, 2, true), llmtest.Quant{Bits: 4, GroupSize: 32}},
		{"mixtral-stacked-bf16", llmtest.MoE(llmtest.Tiny, "mixtral", 4, 2, true), llmtest.Quant{Float: safetensors.BF16}},
		{"gpt_oss-float", gptOSS, llmtest.Quant{}},
		{"gpt_oss-released-mxfp4", gptOSS, llmtest.Quant{ReleasedMXFP4: true}},
		{"gpt_oss-mlx-q4", gptOSS, llmtest.Quant{Bits: 4, GroupSize: 32}},
		{"gpt_oss-mlx-mxfp4", gptOSS, llmtest.Quant{Bits: 8, GroupSize: 64, MXFP4: []string{"mlp.experts."}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.gen.Write(dir, 5, c.q); err != nil {
				t.Fatal(err)
			}
			mapped := openDir(t, dir)
			copied := openCopied(t, dir)
			// the experts, and the dense quantized matrices the backend
			// neither fused nor repacked (read in place too), nothing else
			experts, dense := expertBytes(t, dir)
			if got := mapped.Info().MappedBytes; got < experts || got > experts+dense || experts == 0 {
				t.Errorf("%d bytes mapped, want the %d of the expert tensors and at most %d of dense quantized ones", got, experts, dense)
			}
			if copied.Info().MappedBytes != 0 || copied.Info().WeightBytes != mapped.Info().WeightBytes && c.q.Bits == 0 && c.q.Float == "" {
				t.Errorf("copied model: %+v, mapped %+v", copied.Info(), mapped.Info())
			}
			if d := maxDiff(run(mapped, ids), run(copied, ids)); d != 0 {
				t.Errorf("mapped experts differ from copied ones by %g", d)
			}
		})
	}
}

// openCopied loads dir with every tensor copied (nothing mapped).
func openCopied(t *testing.T, dir string) llm.Model {
	m, _ := openWeights(t, dir, (*nn.Weights).NoMap)
	return m
}

// openWeights loads dir through its own nn.Weights, set up by prepare (if
// not nil) before the model reads them, and returns both.
func openWeights(t *testing.T, dir string, prepare func(*nn.Weights)) (llm.Model, *nn.Weights) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := profile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	w := nn.NewWeights(set, cfg.Quant)
	if prepare != nil {
		prepare(w)
	}
	m, err := llm.New(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, w
}

// expertBytes counts the bytes of the stacked expert tensors (3-D or more,
// named experts or switch_mlp, biases aside) in dir's checkpoint.
func expertBytes(t *testing.T, dir string) (experts, denseQuant int64) {
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	has := map[string]bool{}
	for _, name := range set.Names() {
		has[name] = true
	}
	for _, name := range set.Names() {
		info, err := set.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		stacked := strings.Contains(name, ".experts.") || strings.Contains(name, ".switch_mlp.")
		bias := strings.HasSuffix(name, "_bias") || strings.HasSuffix(name, ".bias")
		if stacked && !bias && len(info.Shape) >= 3 {
			experts += info.Size
			continue
		}
		i := strings.LastIndexByte(name, '.')
		if i > 0 && has[name[:i]+".scales"] && name[i:] != ".bias" {
			denseQuant += info.Size
		}
	}
	return experts, denseQuant
}
