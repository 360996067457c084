package cli

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// hark doctor --model loads a real model, generates, and accounts for its
// memory: the parts add up, the weights are those of the checkpoint, and
// the text form names every part.
func TestDoctorModelMemory(t *testing.T) {
	dir := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	code, out, errs := run(t, context.Background(), "doctor", "--json", "--model", dir)
	if code != ExitOK {
		t.Fatalf("doctor --json --model: %d %q", code, errs)
	}
	var r struct {
		Model *modelMemory `json:"model"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := r.Model
	if m == nil {
		t.Fatalf("no model in %s", out)
	}
	if m.File <= 0 || m.Weights <= 0 || m.Packed+m.Mapped > m.Weights || m.KVCache <= 0 || m.Tokens <= 0 {
		t.Errorf("implausible breakdown: %+v", m)
	}
	// a 4-bit checkpoint is held at about its size: no second copy
	if float64(m.Weights) > 1.1*float64(m.File) {
		t.Errorf("weights %d held for a %d-byte file", m.Weights, m.File)
	}
	if runtime.GOOS == "linux" {
		if m.RSS <= 0 || m.PeakRSS < m.RSS || m.RSSAnon+m.RSSFile > m.RSS || m.GoHeap <= 0 || m.PeakRatio <= 0 {
			t.Errorf("process figures: %+v", m)
		}
		if m.Other != m.RSSAnon-(m.Weights-m.Mapped)-m.KVCache-m.GoHeap || m.Libraries != m.RSSFile-m.ModelRSS || m.Libraries <= 0 {
			t.Errorf("other %d and libraries %d do not complete the resident set: %+v", m.Other, m.Libraries, m)
		}
	}
	code, out, errs = run(t, context.Background(), "doctor", "--model", dir)
	if code != ExitOK {
		t.Fatalf("doctor --model: %d %q", code, errs)
	}
	for _, want := range []string{"model", "weights", "KV cache", "Go heap", "peak / (file + KV)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor --model does not say %q:\n%s", want, out)
		}
	}
	if code, _, errs := run(t, context.Background(), "doctor", "--model", t.TempDir()); code != ExitError || !strings.Contains(errs, "config.json") {
		t.Errorf("doctor --model on an empty folder: %d %q", code, errs)
	}
}
