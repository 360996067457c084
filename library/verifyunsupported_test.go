package library

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Intact files of an architecture Hark does not run passed "hark models
// verify" as ok, though they cannot load (issue 17: verify means "will
// load"). The reason the list gives becomes a verify problem.
func TestVerifyUnsupportedArchitecture(t *testing.T) {
	root := t.TempDir()
	writeSnapshot(t, root, "o/mamba", commitA, map[string][]byte{
		"config.json":       []byte(`{"architectures":["MambaForCausalLM"],"model_type":"mamba"}`),
		"model.safetensors": safetensorsBytes(map[string][]int64{"backbone.embeddings.weight": {4, 2}}, "F32"),
	}, "main")
	l := testLib(t, root)
	scanAll(t, l)
	res, err := l.Verify(context.Background(), "o/mamba", nil)
	must(t, err)
	if res.OK || !strings.Contains(strings.Join(res.Problems, "|"), `Hark cannot load it: model_type "mamba" is not supported`) {
		t.Fatalf("verify of an unsupported architecture: %+v", res)
	}
	if len(res.Mismatches) != 0 || res.Checked != 2 {
		t.Errorf("the hashes still check: %+v", res)
	}
	m, err := l.Get(context.Background(), "o/mamba")
	must(t, err)
	if m.Supported || !strings.Contains(m.Reason, `"mamba" is not supported`) {
		t.Errorf("listed as %+v", m)
	}
}

// The token embedding and final norm sit beside the layer stack; without
// them a checkpoint passed every per-layer check and failed to load with
// "missing tensor model.embed_tokens.weight". A vision tower's own layers
// (no embedding of their own) are not mistaken for the text model.
func TestVerifyNeedsEmbeddingAndFinalNorm(t *testing.T) {
	without := func(names ...string) []byte {
		st := map[string][]int64{}
		for _, n := range []string{"model.embed_tokens.weight", "model.norm.weight",
			"model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.q_proj.weight", "model.layers.2.self_attn.q_proj.weight"} {
			st[n] = []int64{2, 2}
		}
		for _, n := range names {
			delete(st, n)
		}
		return safetensorsBytes(st, "F32")
	}
	withTower := func() []byte {
		st := map[string][]int64{"model.embed_tokens.weight": {2, 2}, "model.norm.weight": {2}, "vision_tower.encoder.layers.0.fc.weight": {2, 2}}
		for i := range 3 {
			st[fmt.Sprintf("model.layers.%d.self_attn.q_proj.weight", i)] = []int64{2, 2}
		}
		return safetensorsBytes(st, "F32")
	}
	for _, c := range []struct {
		name    string
		weights []byte
		want    string // "" when verify passes
	}{
		{"complete", without(), ""},
		{"no embedding", without("model.embed_tokens.weight"), "no token embedding (model.embed_tokens.weight)"},
		{"no final norm", without("model.norm.weight"), "no final norm model.norm.weight"},
		{"vision tower beside the text model", withTower(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(llamaConfig), "model.safetensors": c.weights}, "main")
			l := testLib(t, root)
			scanAll(t, l)
			res, err := l.Verify(context.Background(), "o/r", nil)
			must(t, err)
			got := strings.Join(res.Problems, "|")
			if c.want == "" && !res.OK || c.want != "" && (res.OK || !strings.Contains(got, c.want)) {
				t.Fatalf("verify %+v, want problem %q", res, c.want)
			}
		})
	}
}
