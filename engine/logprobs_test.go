package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"hark/engine/mel"
	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// Logprobs are checked against llama.cpp's logits for the same random
// weights: each greedy token's log-softmax, and the top alternatives.
func TestLogprobsMatchReferenceLogits(t *testing.T) {
	dir := mlxtest.Assets(t, "families", "qwen3-a")
	var g struct {
		PromptIDs []int `json:"prompt_ids"`
		Greedy    []int `json:"greedy_ids"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "logits.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := mel.ReadNPY(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	vocab := ref.Shape[1]
	// llama.cpp's logits were computed with an F32 KV cache
	// (shared/assets/families/README.md): the reference's configuration.
	e, err := Load(filepath.Join(dir, "hf"), LoadOptions{KV: nn.KVQuant{Bits: nn.KVFloat32Bits}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n, k = 12, 4
	res, err := e.Generate(context.Background(), g.PromptIDs, Options{MaxTokens: n, Logprobs: true, TopLogprobs: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logprobs) != len(res.Tokens) || len(res.Tokens) != n {
		t.Fatalf("%d logprobs for %d tokens", len(res.Logprobs), len(res.Tokens))
	}
	for j, lp := range res.Logprobs {
		if lp.Token != g.Greedy[j] || res.Tokens[j] != g.Greedy[j] {
			t.Fatalf("step %d: token %d, reference %d", j, lp.Token, g.Greedy[j])
		}
		row := ref.Data[(len(g.PromptIDs)-1+j)*vocab : (len(g.PromptIDs)+j)*vocab]
		maxL := math.Inf(-1)
		for _, v := range row {
			maxL = math.Max(maxL, float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - maxL)
		}
		lse := maxL + math.Log(sum)
		if want := float64(row[lp.Token]) - lse; math.Abs(lp.Logprob-want) > 2e-3 {
			t.Errorf("step %d: logprob %.5f, reference %.5f", j, lp.Logprob, want)
		}
		order := make([]int, vocab)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
		if len(lp.Top) != k {
			t.Fatalf("step %d: %d alternatives, want %d", j, len(lp.Top), k)
		}
		for i, alt := range lp.Top {
			want := float64(row[order[i]]) - lse
			if math.Abs(alt.Logprob-want) > 2e-3 {
				t.Errorf("step %d alt %d: %d at %.5f, reference %d at %.5f", j, i, alt.Token, alt.Logprob, order[i], want)
			}
			if i > 0 && alt.Logprob > lp.Top[i-1].Logprob {
				t.Errorf("step %d: alternatives out of order", j)
			}
		}
		if lp.Top[0].Token != lp.Token {
			t.Errorf("step %d: greedy token %d is not the top alternative %d", j, lp.Token, lp.Top[0].Token)
		}
	}
	if _, err := e.Generate(context.Background(), g.PromptIDs, Options{TopLogprobs: 2}, nil); err == nil {
		t.Error("top_logprobs without logprobs was accepted")
	}
	if _, err := e.Generate(context.Background(), g.PromptIDs, Options{Logprobs: true, TopLogprobs: MaxTopLogprobs + 1}, nil); err == nil {
		t.Error("top_logprobs over the limit was accepted")
	}
}
