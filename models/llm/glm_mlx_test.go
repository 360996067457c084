package llm_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm/llmtest"
)

// glmToMLX rewrites a GLM-4.x MoE Lite checkpoint in Hugging Face's
// layout as mlx-lm's glm4_moe_lite sanitize step does, from its
// description: the multi-token-prediction layer dropped, each projection
// of the experts stacked as switch_mlp.{gate,up,down}_proj [E, out, in],
// and kv_b_proj ([H*(nope+v), kvLora]) split per head into embed_q
// [H, kvLora, nope] (the key rows, transposed) and unembed_out
// [H, v, kvLora]. When quant is set, embed_q and unembed_out are
// MLX-quantized (the rest stays float); deq then writes their
// dequantized values instead, for the reference.
func glmToMLX(t *testing.T, src, dst string, heads, nope, v, kvLora, layers, experts int, quant, deq bool) {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []safetensors.Tensor
	add := func(name string, shape []int, v []float32) {
		out = append(out, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: safetensors.Float32Bytes(v)})
	}
	addQ := func(name string, shape []int, vals []float32) {
		if !quant {
			add(name+".weight", shape, vals)
			return
		}
		a := mlx.FromSlice(vals, shape...)
		wq, sc, bi, err := mlx.Quantize(a, 32, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer mlx.Free(a, wq, sc, bi)
		if deq {
			d := mlx.Dequantize(wq, sc, bi, 32, 4)
			defer d.Free()
			add(name+".weight", shape, d.Float32s())
			return
		}
		out = append(out, safetensors.Tensor{Name: name + ".weight", DType: safetensors.U32, Shape: wq.Shape(), Data: safetensors.Uint32Bytes(wq.Uint32s())})
		add(name+".scales", sc.Shape(), sc.Float32s())
		add(name+".biases", bi.Shape(), bi.Float32s())
	}
	stacks := map[string][][]float32{}
	shapes := map[string][]int{}
	for _, name := range f.Names() {
		info, _ := f.Tensor(name)
		vals, err := f.Float32s(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, fmt.Sprintf("model.layers.%d.", layers)) {
			continue // the MTP layer
		}
		if i := strings.Index(name, ".mlp.experts."); i >= 0 {
			rest := name[i+len(".mlp.experts."):]
			proj := rest[strings.Index(rest, ".")+1:]
			key := name[:i] + ".mlp.switch_mlp." + proj
			var e int
			fmt.Sscanf(rest, "%d.", &e)
			if stacks[key] == nil {
				stacks[key] = make([][]float32, experts)
			}
			stacks[key][e] = vals
			shapes[key] = info.Shape
			continue
		}
		if strings.HasSuffix(name, "self_attn.kv_b_proj.weight") {
			p := strings.TrimSuffix(name, "kv_b_proj.weight")
			var uk, uv []float32
			for h := 0; h < heads; h++ {
				rows := vals[h*(nope+v)*kvLora : (h+1)*(nope+v)*kvLora]
				for r := 0; r < kvLora; r++ { // transposed key rows
					for c := 0; c < nope; c++ {
						uk = append(uk, rows[c*kvLora+r])
					}
				}
				uv = append(uv, rows[nope*kvLora:]...)
			}
			addQ(p+"embed_q", []int{heads, kvLora, nope}, uk)
			addQ(p+"unembed_out", []int{heads, v, kvLora}, uv)
			continue
		}
		add(name, info.Shape, vals)
	}
	for key, per := range stacks {
		var all []float32
		for _, x := range per {
			all = append(all, x...)
		}
		add(key, append([]int{experts}, shapes[key]...), all)
	}
	if err := safetensors.Write(filepath.Join(dst, "model.safetensors"), out, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if quant && !deq {
		var cfg map[string]any
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		cfg["quantization"] = map[string]any{"group_size": 32, "bits": 4}
		data, _ = json.Marshal(cfg)
	}
	if err := os.WriteFile(filepath.Join(dst, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mlx-lm's GLM-4.x MoE Lite layout (stacked experts, kv_b_proj split
// into per-head embed_q / unembed_out, no MTP layer) computes what the
// Hugging Face checkpoint it was converted from does; with embed_q and
// unembed_out 4-bit, what a float copy of their dequantized values does.
func TestGLMMLXLayout(t *testing.T) {
	mlxtest.NoLeaks(t)
	s := llmtest.Tiny
	s.HeadDim = 32 // nope and v 32, rope 16: rows MLX can quantize in groups of 32
	const experts = 4
	nope, v, kvLora := s.HeadDim, s.HeadDim, s.Hidden/2
	hf := t.TempDir()
	if err := llmtest.GLM4MoeLite(s, 32, experts, 2).Write(hf, 11, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	ids := randomTokens(11, s.Vocab)
	open := func(quant, deq bool) [][]float32 {
		dir := t.TempDir()
		glmToMLX(t, hf, dir, s.Heads, nope, v, kvLora, s.Layers, experts, quant, deq)
		return run(openDir(t, dir), ids)
	}
	want := run(openDir(t, hf), ids)
	mlxFloat := open(false, false)
	if d := maxDiff(mlxFloat, want); d > tol {
		t.Errorf("mlx-lm layout differs from Hugging Face's by %g", d)
	}
	q, dq := open(true, false), open(true, true)
	if d := maxDiff(q, dq); d > tol {
		t.Errorf("4-bit embed_q/unembed_out differ from their dequantized copy by %g", d)
	}
	if d := maxDiff(q, want); d < 1e-4 {
		t.Errorf("4-bit embed_q/unembed_out equal the float model within %g: not quantized?", d)
	}
}
