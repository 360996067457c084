package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// The reported log-probabilities are the log-softmax of the reference
// logits of MLX's own forward pass (stories260K-4bit-g32's expected.json,
// first three steps from BOS), and the top alternatives are in order.
func TestLogprobsStreamMatchMLXLogits(t *testing.T) {
	dir := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Snapshots map[string]struct {
			GreedyIDs []int       `json:"greedy_ids"`
			Logits    [][]float64 `json:"logits_first3"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	ref := exp.Snapshots["stories260K-4bit-g32"]
	// MLX's forward pass kept this float32 model's cache in float32: the
	// reference's configuration, so the 1e-4 bound holds.
	e, err := Load(dir, LoadOptions{KV: nn.KVQuant{Bits: nn.KVFloat32Bits}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var got []TokenLogprob
	opt := Options{MaxTokens: 3, TopLogprobs: 5, OnLogprob: func(lp TokenLogprob) { got = append(got, lp) }}
	// Penalties must not change what is reported: the model's own
	// distribution is.
	opt.RepetitionPenalty, opt.PresencePenalty = 1.3, 0.5
	opt.Temperature = 0
	if _, err := e.Generate(context.Background(), []int{1}, opt, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d logprobs for 3 tokens", len(got))
	}
	for step, lp := range got {
		row := ref.Logits[step]
		lse := math.Inf(-1)
		for _, v := range row {
			lse = math.Max(lse, v)
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(v - lse)
		}
		lse += math.Log(sum)
		if want := row[lp.Token] - lse; math.Abs(lp.Logprob-want) > 1e-4 {
			t.Errorf("step %d token %d: logprob %v, reference %v", step, lp.Token, lp.Logprob, want)
		}
		if len(lp.Top) != 5 {
			t.Fatalf("step %d: %d alternatives, want 5", step, len(lp.Top))
		}
		if step == 0 && lp.Top[0].Token != ref.GreedyIDs[0] {
			t.Errorf("step 0: top token %d, reference greedy %d", lp.Top[0].Token, ref.GreedyIDs[0])
		}
		for i, a := range lp.Top {
			if want := row[a.Token] - lse; math.Abs(a.Logprob-want) > 1e-4 {
				t.Errorf("step %d alt %d: %v, reference %v", step, i, a.Logprob, want)
			}
			if i > 0 && a.Logprob > lp.Top[i-1].Logprob {
				t.Errorf("step %d: alternatives out of order", step)
			}
		}
	}
}
