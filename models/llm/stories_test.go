package llm_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/models/llm"
	"hark/models/nn"
)

// greedy decodes n tokens after ids with a KV cache, feeding one token at a
// time, and returns the ids and the logits of each step.
func greedy(t *testing.T, m llm.Model, ids []int, n int) ([]int, [][]float32) {
	t.Helper()
	caches := m.NewCaches()
	var out []int
	var logits [][]float32
	next := ids
	for len(out) < n {
		tok := mlx.FromSlice(next, 1, len(next))
		lg := m.Forward(tok, caches)
		last := mlx.SliceAxis(lg, 1, len(next)-1, len(next))
		row := last.Float32s()
		mlx.Free(tok, lg, last)
		logits = append(logits, row)
		best := 0
		for i, v := range row {
			if v > row[best] {
				best = i
			}
		}
		out = append(out, best)
		next = []int{best}
	}
	return out, logits
}

func readInts(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, f := range strings.Fields(string(data)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, v)
	}
	return ids
}

func TestStories260KGreedyMatchesLlama2c(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "models", "stories260K")
	want := readInts(t, filepath.Join(root, "expected_greedy_ids_first100.txt"))
	m, _, err := llm.Open(filepath.Join(root, "hf"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if info := m.Info(); info.VocabSize != 512 || info.Layers != 5 || len(info.EOS) != 1 || info.EOS[0] != 2 {
		t.Fatalf("info %+v", info)
	}
	got, _ := greedy(t, m, []int{1}, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step %d: got id %d, llama2.c gave %d\ngot  %v\nwant %v", i, got[i], want[i], got, want)
		}
	}
}

func TestStories260K4BitMatchesMLX(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	data, err := os.ReadFile(filepath.Join(root, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		BOS       int `json:"bos_token_id"`
		Snapshots map[string]struct {
			Greedy []int       `json:"greedy_ids"`
			Logits [][]float64 `json:"logits_first3"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	exp := doc.Snapshots["stories260K-4bit-g32"]
	if len(exp.Greedy) != 100 || len(exp.Logits) != 3 || len(exp.Logits[0]) != 512 {
		t.Fatalf("expected.json: %d greedy ids, %d logit rows", len(exp.Greedy), len(exp.Logits))
	}
	m, cfg, err := llm.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if cfg.Quant == nil || cfg.Quant.Bits != 4 {
		t.Fatalf("quantization not read: %+v", cfg.Quant)
	}
	got, logits := greedy(t, m, []int{doc.BOS}, len(exp.Greedy))
	for i := range exp.Greedy {
		if got[i] != exp.Greedy[i] {
			t.Fatalf("step %d: got id %d, MLX gave %d", i, got[i], exp.Greedy[i])
		}
	}
	worst := 0.0
	for s, row := range exp.Logits {
		for j, v := range row {
			worst = math.Max(worst, math.Abs(float64(logits[s][j])-v))
		}
	}
	if worst > 1e-4 {
		t.Fatalf("logits differ from MLX's by up to %g (tolerance 1e-4)", worst)
	}
	t.Logf("max |logit - MLX| over 3 steps: %.2g", worst)
}

// The tied, quantized embedding must be used both ways: as a lookup and as
// the output head.
func TestStories4BitIsQuantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	m, _, err := llm.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f32, _, err := llm.Open(mlxtest.Assets(t, "models", "stories260K", "hf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f32.Close()
	if q, f := m.Info().WeightBytes, f32.Info().WeightBytes; q*2 > f {
		t.Fatalf("4-bit weights take %d bytes, f32 %d: not quantized?", q, f)
	}
	var _ nn.Cache = nn.NewKVCache()
}
