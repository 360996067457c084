package library

import (
	"context"
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
