package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"hark/library"
	"hark/library/librarytest"
	"hark/models/llm/llmtest"
)

// A GLM-4.5-style checkpoint (glm4_moe; no golden of it exists) is listed
// by `hark models --json` as supported, with its parameters counted from
// the safetensors header, its context length, and its active parameters:
// all of them less the experts a token skips in each MoE layer and less
// the multi-token-prediction layer, which Hark does not run.
func TestModelsListGLM4Moe(t *testing.T) {
	const experts, topK = 8, 2
	s := llmtest.Tiny
	cache, dir := t.TempDir(), t.TempDir()
	t.Setenv("HARK_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "")
	gen := llmtest.GLM4Moe(s, experts, topK, false)
	if err := gen.Write(dir, 1, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	librarytest.WriteSnapshot(t, cache, "zai-org/GLM-tiny", modelsCommit, librarytest.ReadFiles(t, dir, "config.json", "model.safetensors"))
	var total, mtp int64
	for _, ten := range gen.Tensors {
		n := int64(1)
		for _, d := range ten.Shape {
			n *= int64(d)
		}
		total += n
		if strings.HasPrefix(ten.Name, fmt.Sprintf("model.layers.%d.", s.Layers)) {
			mtp += n
		}
	}
	active := total - mtp - int64(s.Layers-1)*(experts-topK)*3*int64(s.Hidden)*int64(s.Intermediate/3)
	code, out, errs := runModelsCLI(t, "", "--json")
	var ms []library.Model
	if code != ExitOK || json.Unmarshal([]byte(out), &ms) != nil || len(ms) != 1 {
		t.Fatalf("%d %s %s", code, out, errs)
	}
	m := ms[0]
	if !m.Supported || m.Family != "glm4_moe" || m.Params != total || m.ActiveParams != active || m.ContextLength != 2048 {
		t.Errorf("supported %v (%s), family %q, params %d, active %d, context %d; want glm4_moe, %d, %d, 2048",
			m.Supported, m.Reason, m.Family, m.Params, m.ActiveParams, m.ContextLength, total, active)
	}
}
