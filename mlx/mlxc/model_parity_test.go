package mlxc_test

import (
	"math"
	"path/filepath"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// logitsTol is the largest logit difference allowed between the backends.
const logitsTol = 1e-4

// decode greedy-decodes steps tokens after prompt on backend name, one
// token at a time through the caches, and returns the ids and each
// step's last-position logits.
func decode(t *testing.T, name, dir string, prompt []int, steps int) ([]int, [][]float32) {
	t.Helper()
	if err := mlx.SetBackend(name); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mlx.SetBackend("cpu") }()
	m, _, err := llm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	caches := m.NewCaches()
	defer func() {
		for _, c := range caches {
			c.Reset()
		}
	}()
	var ids []int
	var logits [][]float32
	next := prompt
	for len(ids) < steps {
		s := mlx.NewScope()
		tok := mlx.FromSlice(next, 1, len(next))
		lg := m.Forward(tok, caches)
		row := mlx.SliceAxis(lg, 1, len(next)-1, len(next)).Float32s()
		s.Close()
		logits = append(logits, row)
		best := 0
		for i, v := range row {
			if v > row[best] {
				best = i
			}
		}
		ids = append(ids, best)
		next = []int{best}
	}
	return ids, logits
}

func compareDecode(t *testing.T, dir string, prompt []int, steps int) {
	t.Helper()
	wantIDs, wantLg := decode(t, "cpu", dir, prompt, steps)
	gotIDs, gotLg := decode(t, mlxcName, dir, prompt, steps)
	worst := 0.0
	for s := range wantLg {
		for i, w := range wantLg[s] {
			worst = max(worst, math.Abs(float64(gotLg[s][i]-w)))
		}
		if gotIDs[s] != wantIDs[s] {
			t.Fatalf("step %d: mlxc chose %d, cpu %d", s, gotIDs[s], wantIDs[s])
		}
	}
	if worst > logitsTol {
		t.Fatalf("logits differ by up to %.3g (allowed %g)", worst, logitsTol)
	}
	t.Logf("%d steps, ids equal, largest logit difference %.3g", steps, worst)
}

const mlxcName = "mlxc"

func TestModelParityStories(t *testing.T) {
	needMLXC(t)
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "models")
	t.Run("f32", func(t *testing.T) { compareDecode(t, filepath.Join(root, "stories260K", "hf"), []int{1}, 40) })
	t.Run("q4", func(t *testing.T) { compareDecode(t, filepath.Join(root, "stories260K-4bit-g32"), []int{1}, 40) })
}

func TestModelParityFamilies(t *testing.T) {
	needMLXC(t)
	mlxtest.NoLeaks(t)
	s := llmtest.Tiny
	gens := map[string]llmtest.Model{
		"llama":  llmtest.Llama(s, "llama", false),
		"qwen3":  llmtest.Llama(s, "qwen3", true),
		"phi3":   llmtest.Phi3(s, 0.5),
		"gemma3": llmtest.Gemma3(s, 4, 2, false),
		// the recurrent (gated delta) layers and fused / split experts
		"qwen3_5":         llmtest.Qwen35(s, 0, 0, false),
		"qwen3_5_moe":     llmtest.Qwen35(s, 4, 2, false),
		"qwen3_5_moe-mlx": llmtest.Qwen35(s, 4, 2, true),
	}
	prompt := []int{1, 17, 33, 5, 99, 64, 2, 120, 7}
	for name, gen := range gens {
		for _, q := range []llmtest.Quant{{}, {Bits: 4, GroupSize: 32}, {Float: safetensors.BF16}} {
			tag := name
			switch {
			case q.Bits > 0:
				tag += "-q4"
			case q.Float != "":
				tag += "-bf16"
			}
			t.Run(tag, func(t *testing.T) {
				dir := t.TempDir()
				if err := gen.Write(dir, 42, q); err != nil {
					t.Fatal(err)
				}
				compareDecode(t, dir, prompt, 12)
			})
		}
	}
}
