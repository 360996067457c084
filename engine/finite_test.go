package engine

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// poisonedStories copies stories260K to a temp dir with every element of
// tensor set to v.
func poisonedStories(t *testing.T, tensor string, v float32) string {
	t.Helper()
	src := filepath.Join(mlxtest.Assets(t, "models", "stories260K"), "hf")
	dir := filepath.Join(t.TempDir(), "stories-poisoned")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	linkFiles(t, src, dir, "config.json", "tokenizer.json", "tokenizer_config.json")
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Tensor(tensor)
	f.Close()
	if err != nil || info.DType != safetensors.F32 {
		t.Fatalf("%s: %+v %v", tensor, info, err)
	}
	data, err := os.ReadFile(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for i := info.Offset; i < info.Offset+info.Size; i += 4 {
		binary.LittleEndian.PutUint32(data[i:], math.Float32bits(v))
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NaN weights used to give an empty reply with rc=0 (ids [0,0,0,...]).
func TestNaNWeightsRefusedAtLoad(t *testing.T) {
	dir := poisonedStories(t, "model.norm.weight", float32(math.NaN()))
	_, err := Load(dir, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "weights contain NaN") || !strings.Contains(err.Error(), "stories-poisoned") || !strings.Contains(err.Error(), "model.norm.weight") {
		t.Fatalf("err %v, want the NaN named with the model and tensor", err)
	}
}

// Weights finite on disk but too large to compute with pass the load scan;
// their NaN/Inf logits stop generation with the same clear error.
func TestNonFiniteLogitsStopGeneration(t *testing.T) {
	mlxtest.NoLeaks(t)
	dir := poisonedStories(t, "model.norm.weight", 3e38)
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Generate(context.Background(), e.RawPrompt("Once upon a time"), Options{MaxTokens: 8}, nil)
	if err == nil || !strings.Contains(err.Error(), "weights contain NaN") || !strings.Contains(err.Error(), "stories-poisoned") {
		t.Fatalf("err %v (result %+v), want a NaN error naming the model", err, res)
	}
	// The engine stays usable (and the broken cache is gone).
	if _, err := e.Generate(context.Background(), e.RawPrompt("Again"), Options{MaxTokens: 2}, nil); err == nil {
		t.Fatal("second generation with the same weights succeeded")
	}
}

func TestNonFiniteBits(t *testing.T) {
	for dt, cases := range map[safetensors.DType]map[uint64]bool{
		safetensors.F16:  {0x7c00: true, 0xfc00: true, 0x7e00: true, 0x7bff: false, 0x3c00: false},
		safetensors.BF16: {0x7f80: true, 0xff80: true, 0x7fc0: true, 0x7f7f: false, 0x3f80: false},
		safetensors.F32:  {uint64(math.Float32bits(float32(math.Inf(-1)))): true, uint64(math.Float32bits(math.MaxFloat32)): false},
	} {
		bad := nonFiniteFunc(dt)
		for bits, want := range cases {
			b := make([]byte, 8)
			binary.LittleEndian.PutUint64(b, bits)
			if got := bad(b[:dt.Size()]); got != want {
				t.Errorf("%s %#x: %v, want %v", dt, bits, got, want)
			}
		}
	}
}
