package engine

import (
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/nn"
)

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		total, budget int64
		want          Fit
	}{
		{100, 0, FitFits}, {50, 100, FitFits}, {75, 100, FitFits}, {76, 100, FitTight}, {100, 100, FitTight}, {101, 100, FitTooBig},
	} {
		if got := Verdict(c.total, c.budget); got != c.want {
			t.Errorf("Verdict(%d, %d) = %s, want %s", c.total, c.budget, got, c.want)
		}
	}
}

// The Library's estimate is the one Load checks, for the same KV setting;
// a quantized cache and a shorter context shrink only the KV part.
func TestEstimateIsWhatLoadChecks(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := mlxtest.Assets(t, "models", "stories260K", "hf")
	f32 := nn.KVQuant{Bits: nn.KVFloat32Bits}
	for _, kv := range []nn.KVQuant{{}, f32, {Bits: 8, Group: 32}} {
		e, err := Load(dir, LoadOptions{KV: kv})
		if err != nil {
			t.Fatal(err)
		}
		want := e.Memory
		e.Close()
		got, err := Estimate(dir, EstimateOptions{KV: kv})
		if err != nil {
			t.Fatal(err)
		}
		got.Available = want.Available
		if got != want {
			t.Errorf("kv %+v: estimate %+v, Load checked %+v", kv, got, want)
		}
	}
	full, _ := Estimate(dir, EstimateOptions{KV: f32})
	def, _ := Estimate(dir, EstimateOptions{})
	half, _ := Estimate(dir, EstimateOptions{KV: nn.KVQuant{Bits: nn.KVHalfBits}})
	q8, _ := Estimate(dir, EstimateOptions{KV: nn.KVQuant{Bits: 8, Group: 32}})
	short, _ := Estimate(dir, EstimateOptions{KV: f32, Context: full.Context / 4})
	// An unset cache costs what the default stated does; f16 halves
	// float32; 8 bits in groups of 32 cost 1 + 8/32 bytes a value, under
	// a third of float32's 4.
	stated := full
	if DefaultKV != (nn.KVQuant{}) {
		stated, _ = Estimate(dir, EstimateOptions{KV: DefaultKV})
	}
	if def.KVCache != stated.KVCache || def.Total != stated.Total || half.KVCache != full.KVCache/2 || q8.Weights != full.Weights || q8.KVCache >= full.KVCache/3 || short.KVCache != full.KVCache/4 || short.Weights != full.Weights {
		t.Errorf("float32 %+v\ndefault %+v\ndefault stated %+v\nf16 %+v\nq8 %+v\nshort %+v", full, def, stated, half, q8, short)
	}
	if _, err := Estimate(dir, EstimateOptions{KV: nn.KVQuant{Bits: 3}}); err == nil {
		t.Error("a 3-bit KV cache was estimated")
	}
	if _, err := Estimate(t.TempDir(), EstimateOptions{}); err == nil {
		t.Error("a folder without a model was estimated")
	}
}
