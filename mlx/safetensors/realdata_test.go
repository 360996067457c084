package safetensors_test

// This is an external test package: hark/mlx/mlxtest imports hark/mlx,
// which may import this package, so an in-package test may not import it.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// llama2c holds the float arrays of a llama2.c checkpoint, read with an
// independent little parser so the safetensors values can be checked
// against the original training export.
type llama2c struct {
	dim, hidden, layers, heads, kvHeads, vocab, seqLen int
	tensors                                            map[string][]float32
}

func readLlama2c(t *testing.T, path string) *llama2c {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hdr [7]int32
	for i := range hdr {
		hdr[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	c := &llama2c{dim: int(hdr[0]), hidden: int(hdr[1]), layers: int(hdr[2]), heads: int(hdr[3]),
		kvHeads: int(hdr[4]), vocab: int(hdr[5]), seqLen: int(hdr[6]), tensors: map[string][]float32{}}
	if c.vocab < 0 {
		c.vocab = -c.vocab // negative means an unshared classifier follows
	}
	kvDim := c.dim / c.heads * c.kvHeads
	off := 28
	take := func(name string, n int) {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[off+4*i:]))
		}
		off += 4 * n
		c.tensors[name] = v
	}
	L, d, h := c.layers, c.dim, c.hidden
	take("tok", c.vocab*d)
	take("rms_att", L*d)
	take("wq", L*d*d)
	take("wk", L*kvDim*d)
	take("wv", L*kvDim*d)
	take("wo", L*d*d)
	take("rms_ffn", L*d)
	take("w1", L*h*d)
	take("w2", L*d*h)
	take("w3", L*h*d)
	take("rms_final", d)
	return c
}

// unpermuteRoPE undoes the row permutation HF's Llama converter applies to
// q/k projections: within each head of size hd, HF row p*(hd/2)+i holds
// the original (interleaved-pair) row 2i+p, moving RoPE from adjacent
// pairs to rotate-half.
func unpermuteRoPE(w []float32, rows, cols, heads int) []float32 {
	hd := rows / heads
	out := make([]float32, len(w))
	for hh := 0; hh < heads; hh++ {
		for i := 0; i < hd/2; i++ {
			for p := 0; p < 2; p++ {
				src := hh*hd + p*(hd/2) + i
				dst := hh*hd + 2*i + p
				copy(out[dst*cols:(dst+1)*cols], w[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}

func TestRealHFCheckpoint(t *testing.T) {
	path := mlxtest.Assets(t, "models", "stories260K", "hf", "model.safetensors")
	ref := readLlama2c(t, mlxtest.Assets(t, "models", "stories260K", "llama2c", "stories260K.bin"))
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := len(f.Names()), 2+9*ref.layers; got != want {
		t.Errorf("%d tensors, want %d: %v", got, want, f.Names())
	}
	if f.Metadata()["format"] != "pt" {
		t.Errorf("metadata = %v", f.Metadata())
	}
	d, h, kvDim := ref.dim, ref.hidden, ref.dim/ref.heads*ref.kvHeads
	shapes := map[string][]int{
		"model.embed_tokens.weight":                      {ref.vocab, d},
		"model.norm.weight":                              {d},
		"model.layers.4.self_attn.q_proj.weight":         {d, d},
		"model.layers.4.self_attn.k_proj.weight":         {kvDim, d},
		"model.layers.0.self_attn.v_proj.weight":         {kvDim, d},
		"model.layers.0.mlp.down_proj.weight":            {d, h},
		"model.layers.2.mlp.gate_proj.weight":            {h, d},
		"model.layers.1.post_attention_layernorm.weight": {d},
	}
	for name, want := range shapes {
		in, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if in.DType != safetensors.F32 || !slices.Equal(in.Shape, want) {
			t.Errorf("%s: %s %v, want F32 %v", name, in.DType, in.Shape, want)
		}
	}
	check := func(name string, want []float32) {
		t.Helper()
		got, err := f.Float32s(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: values differ from the llama2.c checkpoint", name)
		}
	}
	check("model.embed_tokens.weight", ref.tensors["tok"])
	check("model.norm.weight", ref.tensors["rms_final"])
	for l := 0; l < ref.layers; l++ {
		pre := fmt.Sprintf("model.layers.%d.", l)
		sl := func(name string, n int) []float32 { return ref.tensors[name][l*n : (l+1)*n] }
		check(pre+"input_layernorm.weight", sl("rms_att", d))
		check(pre+"post_attention_layernorm.weight", sl("rms_ffn", d))
		check(pre+"self_attn.v_proj.weight", sl("wv", kvDim*d))
		check(pre+"self_attn.o_proj.weight", sl("wo", d*d))
		check(pre+"mlp.gate_proj.weight", sl("w1", h*d))
		check(pre+"mlp.down_proj.weight", sl("w2", d*h))
		check(pre+"mlp.up_proj.weight", sl("w3", h*d))
		for _, qk := range []struct {
			name      string
			ref       string
			rows, hds int
		}{{"q_proj", "wq", d, ref.heads}, {"k_proj", "wk", kvDim, ref.kvHeads}} {
			hf, err := f.Float32s(pre + "self_attn." + qk.name + ".weight")
			if err != nil {
				t.Fatal(err)
			}
			want := sl(qk.ref, qk.rows*d)
			if slices.Equal(hf, want) {
				t.Errorf("%s: HF rows equal llama2.c rows before unpermuting; the permutation check proves nothing", qk.name)
			}
			if !slices.Equal(unpermuteRoPE(hf, qk.rows, d, qk.hds), want) {
				t.Errorf("layer %d %s: unpermuted HF rows differ from llama2.c", l, qk.name)
			}
		}
	}
}

func TestRealMLXIndex(t *testing.T) {
	dir := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	s, err := safetensors.OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Files()) != 1 {
		t.Errorf("%d shards, want 1", len(s.Files()))
	}
	in, err := s.Tensor("model.embed_tokens.weight")
	if err != nil {
		t.Fatal(err)
	}
	if in.DType != safetensors.U32 || !slices.Equal(in.Shape, []int{512, 8}) {
		t.Errorf("embed weight: %s %v, want U32 [512 8]", in.DType, in.Shape)
	}
	// MLX's compact header leaves the data section at an odd offset.
	first := int64(math.MaxInt64)
	for _, n := range s.Names() {
		in, _ := s.Tensor(n)
		first = min(first, in.Offset)
	}
	if first != 11070 {
		t.Errorf("data section starts at %d, want 11070 (unaligned)", first)
	}
	sc, err := s.Float32s("model.layers.0.mlp.gate_proj.scales")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) != 172*2 {
		t.Errorf("scales has %d values", len(sc))
	}
	neg := 0
	for _, v := range sc {
		if v < 0 {
			neg++
		}
	}
	if neg == 0 || neg == len(sc) {
		t.Errorf("%d of %d scales negative; MLX's edge rule gives a mix", neg, len(sc))
	}
	w, err := s.Uint32s("model.embed_tokens.weight")
	if err != nil || len(w) != 512*8 {
		t.Fatalf("Uint32s: %d words, %v", len(w), err)
	}
	if _, err := s.Uint32s("model.norm.weight"); err == nil {
		t.Error("Uint32s on an F32 tensor succeeded")
	}
	// The index's own file path works as well as the folder.
	s2, err := safetensors.OpenIndex(dir + "/" + safetensors.IndexName)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

// TestTruncatedRealFile cuts a real checkpoint at several points: every
// cut must give an error naming the file, never a panic or a silent
// success.
func TestTruncatedRealFile(t *testing.T) {
	src := mlxtest.Assets(t, "models", "stories260K-4bit-g32", "model.safetensors")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, cut := range []int{0, 4, 8, 100, 11069, 11070, 11071, len(raw) / 2, len(raw) - 1} {
		p := fmt.Sprintf("%s/cut%d.safetensors", dir, cut)
		if err := os.WriteFile(p, raw[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := safetensors.Open(p)
		if err == nil {
			f.Close()
			t.Errorf("cut at %d: opened without error", cut)
			continue
		}
		t.Logf("cut at %d: %v", cut, err)
		if !strings.Contains(err.Error(), p) {
			t.Errorf("cut at %d: error %q does not name the file", cut, err)
		}
	}
}
