package llm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
	"hark/models/nn"
)

const tol = 1e-4

// writeAndOpen writes gen into a temp dir and loads it.
func writeAndOpen(t *testing.T, gen llmtest.Model, q llmtest.Quant) llm.Model {
	t.Helper()
	dir := t.TempDir()
	if err := gen.Write(dir, 42, q); err != nil {
		t.Fatal(err)
	}
	m, _, err := llm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func randomTokens(n, vocab int) []int {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(vocab)))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	return ids
}

// run feeds ids in the given chunk sizes through one set of caches and
// returns the logits of every position, [len(ids)][vocab].
func run(m llm.Model, ids []int, chunks ...int) [][]float32 {
	caches := m.NewCaches()
	if chunks == nil {
		chunks = []int{len(ids)}
	}
	var rows [][]float32
	pos := 0
	for _, n := range chunks {
		tok := mlx.FromSlice(ids[pos:pos+n], 1, n)
		lg := m.Forward(tok, caches)
		flat := lg.Float32s()
		v := lg.Dim(2)
		for i := 0; i < n; i++ {
			rows = append(rows, flat[i*v:(i+1)*v])
		}
		mlx.Free(tok, lg)
		pos += n
	}
	return rows
}

func maxDiff(a, b [][]float32) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j]-b[i][j])))
		}
	}
	return d
}

func ones(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = 1
	}
	return c
}

// f32Tensor is a float32 tensor for safetensors.Write.
func f32Tensor(name string, shape []int, v []float32) safetensors.Tensor {
	return safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: safetensors.Float32Bytes(v)}
}

// writeRelayout makes dst the checkpoint in src stored another way: out as
// its model.safetensors beside a copy of src's config.json.
func writeRelayout(t *testing.T, src, dst string, out []safetensors.Tensor) {
	t.Helper()
	if err := safetensors.Write(filepath.Join(dst, "model.safetensors"), out, nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
}

func withConfig(m llmtest.Model, key string, v any) llmtest.Model {
	cfg := map[string]any{}
	for k, x := range m.Config {
		cfg[k] = x
	}
	cfg[key] = v
	m.Config = cfg
	return m
}

// phi3LongRope is Phi-3.5-style: 4 of 8 rotary pairs stretched, 8x context.
func phi3LongRope() llmtest.Model {
	m := withConfig(llmtest.Phi3(llmtest.Tiny, 1), "rope_scaling", map[string]any{
		"type": "longrope", "short_factor": []float64{1, 1, 1, 1, 1, 1, 1, 1},
		"long_factor": []float64{1, 1, 1, 1, 2, 4, 8, 16}})
	m.Config["original_max_position_embeddings"] = 256
	return m
}

type family struct {
	name string
	gen  llmtest.Model
}

func families() []family {
	s := llmtest.Tiny
	return []family{
		{"llama", llmtest.Llama(s, "llama", false)},
		{"llama-tied", llmtest.Llama(s, "llama", true)},
		{"mistral", llmtest.Llama(s, "mistral", false)},
		{"qwen2", llmtest.Llama(s, "qwen2", true)},
		{"qwen3", llmtest.Llama(s, "qwen3", true)},
		{"llama3-rope-scaling", withConfig(llmtest.Llama(s, "llama", true), "rope_scaling", map[string]any{
			"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64})},
		{"qwen2-yarn", withConfig(llmtest.Llama(s, "qwen2", false), "rope_scaling", map[string]any{
			"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})},
		{"phi3", llmtest.Phi3(s, 0.5)},
		{"phi3-longrope", phi3LongRope()},
		{"gemma3", llmtest.Gemma3(s, 4, 2, false)},
		{"gemma3-multimodal", llmtest.Gemma3(s, 4, 2, true)},
		{"qwen3_moe", llmtest.MoE(s, "qwen3_moe", 8, 2, false)},
		{"qwen3_moe-stacked-dense0", llmtest.MoE(s, "qwen3_moe", 8, 2, true, 0)},
		{"mixtral", llmtest.MoE(s, "mixtral", 4, 2, false)},
		{"mixtral-stacked", llmtest.MoE(s, "mixtral", 4, 2, true)},
		{"deepseek_v2", llmtest.DeepseekV2(s, 32, 4, 2)},
		{"deepseek_v2-lite", llmtest.DeepseekV2(s, 0, 4, 2)},
		{"glm4_moe_lite", llmtest.GLM4MoeLite(s, 32, 4, 2)},
		{"glm4_moe", llmtest.GLM4Moe(s, 4, 2, false)},
		{"glm4_moe-qknorm-mlx-layout", *llmtest.GLM4Moe(s, 4, 2, true).MLXLayout},
		{"gpt_oss", llmtest.GptOSS(s, 4, 4, 2, false)},
		{"gpt_oss-mlx-layout", *llmtest.GptOSS(s, 4, 4, 2, false).MLXLayout},
		{"qwen3_5", llmtest.Qwen35(s, 0, 0, false)},
		{"qwen3_5-mlx", llmtest.Qwen35(s, 0, 0, true)},
		{"qwen3_5_moe", llmtest.Qwen35(s, 4, 2, false)},
		{"qwen3_5_moe-mlx", llmtest.Qwen35(s, 4, 2, true)},
		{"gemma4", llmtest.Gemma4(s, 4, gemma4Types, 0, false)},
		{"gemma4-kv-shared", llmtest.Gemma4(s, 4, gemma4Types, 2, false)},
		{"gemma4-per-layer", llmtest.WithPerLayer(llmtest.Gemma4(s, 4, gemma4Types, 2, false), s, 32)},
		{"gemma4-moe", llmtest.WithMoE(llmtest.Gemma4(s, 4, gemma4Types, 0, false), s, 4, 2)},
	}
}

// gemma4Types alternate Gemma 4's two layer kinds, so that with two
// KV-shared layers each kind shares.
var gemma4Types = []string{"sliding_attention", "full_attention", "sliding_attention", "full_attention"}

// Every family, float32 and 4-bit: decoding one token at a time through the
// cache, and prefilling in uneven chunks, both reproduce the one-shot
// forward pass at every position.
func TestCachedDecodeMatchesFullForward(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(14, llmtest.Tiny.Vocab)
	for _, f := range families() {
		for _, q := range []llmtest.Quant{{}, {Bits: 4, GroupSize: 32}} {
			name := f.name
			if q.Bits > 0 {
				name += "-q4"
			}
			t.Run(name, func(t *testing.T) {
				m := writeAndOpen(t, f.gen, q)
				full := run(m, ids)
				if d := maxDiff(run(m, ids, ones(len(ids))...), full); d > tol {
					t.Errorf("token-by-token decode differs from the full forward by %g", d)
				}
				if d := maxDiff(run(m, ids, 5, 1, 6, 2), full); d > tol {
					t.Errorf("chunked prefill differs from one-shot by %g", d)
				}
			})
		}
	}
}

// A quantized checkpoint computes what its dequantized float32 copy does:
// the quantized matmul and embedding kernels add no error of their own.
func TestQuantizedMatchesDequantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	for _, f := range families() {
		if f.name == "qwen3_5_moe" {
			// Hugging Face's fused experts stay float (most of this tiny
			// model); mlx-lm quantizes them in its own split layout,
			// which qwen3_5_moe-mlx covers.
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			q := llmtest.Quant{Bits: 4, GroupSize: 32, Overrides: map[string][2]int{}}
			// mixed precision as mlx-lm writes it: one module at 8 bits, g64
			for _, ten := range f.gen.Tensors {
				if strings.HasSuffix(ten.Name, "layers.1.mlp.down_proj.weight") {
					q.Overrides[strings.TrimSuffix(ten.Name, ".weight")] = [2]int{8, 64}
				}
			}
			qm := writeAndOpen(t, f.gen, q)
			dq := q
			dq.Dequantized = true
			dm := writeAndOpen(t, f.gen, dq)
			fm := writeAndOpen(t, f.gen, llmtest.Quant{})
			if qm.Info().WeightBytes*3 > fm.Info().WeightBytes {
				t.Fatalf("quantized model holds %d bytes vs %d in f32", qm.Info().WeightBytes, fm.Info().WeightBytes)
			}
			if d := maxDiff(run(qm, ids), run(dm, ids)); d > tol {
				t.Errorf("quantized differs from dequantized f32 by %g", d)
			}
			// and quantization did change the model (the test is not
			// comparing a model with itself)
			if d := maxDiff(run(qm, ids), run(fm, ids)); d < 1e-3 {
				t.Errorf("4-bit model equals the f32 original within %g: quantization not applied?", d)
			}
		})
	}
}

// Rows of 128 or more values in groups of 64 or 128 take the backend's own
// layout where it has one (on the cpu backend: the packed 4-bit kernel,
// with AVX-512 VNNI and GFNI): every family must keep the same invariants
// with it: equal to the dequantized float32 copy, decoding through the cache
// (the fused decode attention, where the family uses it) equal to the full
// forward pass, and chunked prefill equal to one-shot.
func TestQuantizedWideRowsMatchDequantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	wide := llmtest.Shape{Hidden: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Intermediate: 256, Vocab: 128}
	ids := randomTokens(14, wide.Vocab)
	for _, f := range []family{
		{"qwen2", llmtest.Llama(wide, "qwen2", true)},
		{"llama", llmtest.Llama(wide, "llama", false)},
		{"qwen3", llmtest.Llama(wide, "qwen3", true)},
		{"phi3", llmtest.Phi3(wide, 1)},
		{"gemma3", llmtest.Gemma3(wide, 4, 2, false)},
		{"gemma4", llmtest.Gemma4(wide, 4, gemma4Types, 1, false)},
	} {
		for _, gs := range []int{64, 128} {
			t.Run(fmt.Sprintf("%s-g%d", f.name, gs), func(t *testing.T) {
				q := llmtest.Quant{Bits: 4, GroupSize: gs}
				qm := writeAndOpen(t, f.gen, q)
				// Every matrix of this shape takes the packed layout where
				// the CPU has its kernel; then the comparisons test it.
				if info := qm.Info(); backendPacks(t, 128, gs) && info.PackedBytes != info.WeightBytes-floatBytes(f.gen) {
					t.Errorf("%d of %d weight bytes packed, want all but the %d of norms and biases", info.PackedBytes, info.WeightBytes, floatBytes(f.gen))
				}
				dq := q
				dq.Dequantized = true
				dm := writeAndOpen(t, f.gen, dq)
				full := run(qm, ids)
				if d := maxDiff(full, run(dm, ids)); d > tol {
					t.Errorf("quantized differs from dequantized f32 by %g", d)
				}
				if d := maxDiff(run(qm, ids, ones(len(ids))...), full); d > tol {
					t.Errorf("token-by-token decode differs from the full forward by %g", d)
				}
				if d := maxDiff(run(qm, ids, 5, 1, 6, 2), full); d > tol {
					t.Errorf("chunked prefill differs from one-shot by %g", d)
				}
			})
		}
	}
}

// floatBytes is the size of the tensors of m that stay float32 when it is
// quantized: norms and biases.
func floatBytes(m llmtest.Model) int64 {
	var n int64
	for _, t := range m.Tensors {
		if t.Kind == llmtest.Norm || t.Kind == llmtest.NormDelta || t.Kind == llmtest.Bias {
			size := int64(4)
			for _, d := range t.Shape {
				size *= int64(d)
			}
			n += size
		}
	}
	return n
}

// Gemma 3's sliding layers: decoding through the rotating cache (which
// drops positions older than the window) equals a one-shot forward pass
// under the sliding-window mask, well past the window.
func TestGemma3RotatingCacheMatchesWindowMask(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(23, llmtest.Tiny.Vocab)
	m := writeAndOpen(t, llmtest.Gemma3(llmtest.Tiny, 4, 2, false), llmtest.Quant{})
	full := run(m, ids)
	if d := maxDiff(run(m, ids, ones(len(ids))...), full); d > tol {
		t.Fatalf("rotating-cache decode differs from the windowed forward by %g", d)
	}
	if d := maxDiff(run(m, ids, 7, 1, 9, 6), full); d > tol {
		t.Fatalf("chunked prefill through the rotating cache differs by %g", d)
	}
	// The window must matter: the same weights with a window longer than
	// the sequence give different logits once positions fall out of it.
	wide := writeAndOpen(t, llmtest.Gemma3(llmtest.Tiny, 64, 2, false), llmtest.Quant{})
	if d := maxDiff(run(wide, ids)[8:], full[8:]); d < 1e-3 {
		t.Fatalf("window 4 and window 64 agree within %g: window not applied", d)
	}
	if d := maxDiff(run(wide, ids)[:4], full[:4]); d > tol {
		t.Fatalf("within the window the models should agree, differ by %g", d)
	}
}

func TestRotatingCacheTrim(t *testing.T) {
	mlxtest.NoLeaks(t)
	c := nn.NewRotatingCache(4)
	kv := func(n int) *mlx.Array { return mlx.Zeros([]int{1, 1, n, 2}, mlx.Float32) }
	feed := func(n int) {
		k, v := kv(n), kv(n)
		ok, ov := c.Update(k, v)
		mlx.Free(k, v, ok, ov)
	}
	feed(3)
	if !c.Trim(1) || c.Offset() != 2 {
		t.Fatalf("trim within the window failed: offset %d", c.Offset())
	}
	feed(12)
	feed(1) // the update drops what the window no longer needs: 3 kept + 1 new
	if c.Offset() != 15 || c.Trim(10) {
		t.Fatalf("offset %d; trimmed back past positions the cache dropped", c.Offset())
	}
	if !c.Trim(1) || c.Offset() != 14 {
		t.Fatalf("short rollback failed: offset %d", c.Offset())
	}
	if c.Trim(1) {
		t.Fatal("rollback left fewer than window-1 positions before the next token")
	}
	snap := c.Snapshot()
	feed(5)
	if err := c.Restore(snap); err != nil || c.Offset() != 14 {
		t.Fatalf("restore: %v, offset %d", err, c.Offset())
	}
}

func TestLoaderReportsMismatches(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.Llama(llmtest.Tiny, "llama", false)
	// drop one tensor, add a stray one
	var ts []llmtest.Tensor
	for _, x := range gen.Tensors {
		if x.Name != "model.layers.1.mlp.up_proj.weight" {
			ts = append(ts, x)
		}
	}
	ts = append(ts, llmtest.Tensor{Name: "model.layers.0.self_attn.extra.weight", Shape: []int{4}, Kind: llmtest.Bias})
	gen.Tensors = ts
	dir := t.TempDir()
	if err := gen.Write(dir, 1, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := llm.Open(dir)
	if err == nil {
		t.Fatal("loaded a checkpoint with a missing tensor")
	}
	for _, want := range []string{"missing tensor model.layers.1.mlp.up_proj.weight", "unexpected tensors model.layers.0.self_attn.extra.weight"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// Half-precision checkpoints load (widened to float32) and compute what a
// float32 checkpoint holding the same rounded values does.
func TestHalfPrecisionWeights(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(7, llmtest.Tiny.Vocab)
	for _, dt := range []safetensors.DType{safetensors.BF16, safetensors.F16} {
		t.Run(string(dt), func(t *testing.T) {
			gen := llmtest.Gemma3(llmtest.Tiny, 4, 2, false)
			half := writeAndOpen(t, gen, llmtest.Quant{Float: dt})
			twin := writeAndOpen(t, gen, llmtest.Quant{RoundTo: dt})
			if d := maxDiff(run(half, ids), run(twin, ids)); d > 1e-5 {
				t.Fatalf("%s checkpoint differs from its float32 twin by %g", dt, d)
			}
		})
	}
}

// RoPE scaling is applied: the same weights without it give other logits.
func TestRopeScalingChangesOutput(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	plain := llmtest.Llama(llmtest.Tiny, "llama", true)
	for _, sc := range []map[string]any{
		{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
		{"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
		{"type": "linear", "factor": 2.0},
		{"type": "longrope", "long_factor": []float64{1, 1, 1, 1, 2, 4, 8, 16}, "short_factor": []float64{1, 1, 1, 1, 1, 1, 1, 1}, "original_max_position_embeddings": 256},
	} {
		a := writeAndOpen(t, plain, llmtest.Quant{})
		b := writeAndOpen(t, withConfig(plain, "rope_scaling", sc), llmtest.Quant{})
		if d := maxDiff(run(a, ids), run(b, ids)); d < 1e-4 {
			t.Errorf("rope_scaling %v changed logits by only %g", sc, d)
		}
	}
	dir := t.TempDir()
	if err := withConfig(plain, "rope_scaling", map[string]any{"type": "dynamic", "factor": 2.0}).Write(dir, 1, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := llm.Open(dir); err == nil || !strings.Contains(err.Error(), "dynamic") {
		t.Fatalf("dynamic rope scaling: %v", err)
	}
}

// Batched rows are independent: a [2, L] forward equals two [1, L] ones.
func TestBatchRowsIndependent(t *testing.T) {
	mlxtest.NoLeaks(t)
	a, b := randomTokens(6, llmtest.Tiny.Vocab), randomTokens(7, llmtest.Tiny.Vocab)[1:]
	for _, f := range []family{{"llama", llmtest.Llama(llmtest.Tiny, "qwen3", true)}, {"gemma3", llmtest.Gemma3(llmtest.Tiny, 4, 2, false)}, {"phi3", llmtest.Phi3(llmtest.Tiny, 1)},
		{"qwen3_5", llmtest.Qwen35(llmtest.Tiny, 0, 0, false)}, {"qwen3_5_moe", llmtest.Qwen35(llmtest.Tiny, 4, 2, true)},
		{"gemma4", llmtest.Gemma4(llmtest.Tiny, 4, gemma4Types, 1, false)}} {
		t.Run(f.name, func(t *testing.T) {
			m := writeAndOpen(t, f.gen, llmtest.Quant{Bits: 4, GroupSize: 32})
			tok := mlx.FromSlice(append(append([]int(nil), a...), b...), 2, len(a))
			lg := m.Forward(tok, nil)
			flat := lg.Float32s()
			mlx.Free(tok, lg)
			v := llmtest.Tiny.Vocab
			for r, ids := range [][]int{a, b} {
				one := run(m, ids)
				var rows [][]float32
				for i := range ids {
					off := (r*len(ids) + i) * v
					rows = append(rows, flat[off:off+v])
				}
				if d := maxDiff(rows, one); d > tol {
					t.Fatalf("batch row %d differs from its own forward by %g", r, d)
				}
			}
		})
	}
}

// transformers v5 spells Gemma 3's layout as layer_types and per-type
// rope_parameters; it must build the same model as the older fields.
func TestGemma3NewConfigSpelling(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(12, llmtest.Tiny.Vocab)
	// bases away from the defaults, so reading them is checked too
	old := withConfig(withConfig(llmtest.Gemma3(llmtest.Tiny, 4, 2, false), "rope_theta", 5e5), "rope_local_base_freq", 2e4)
	nu := withConfig(old, "layer_types", []string{"sliding_attention", "full_attention"})
	delete(nu.Config, "sliding_window_pattern")
	delete(nu.Config, "rope_scaling")
	delete(nu.Config, "rope_theta")
	delete(nu.Config, "rope_local_base_freq")
	nu.Config["rope_parameters"] = map[string]any{
		"full_attention":    map[string]any{"rope_type": "linear", "factor": 8.0, "rope_theta": 5e5},
		"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 2e4},
	}
	a, b := writeAndOpen(t, old, llmtest.Quant{}), writeAndOpen(t, nu, llmtest.Quant{})
	if d := maxDiff(run(a, ids), run(b, ids)); d > 1e-6 {
		t.Fatalf("layer_types/rope_parameters model differs by %g", d)
	}
	// and the per-type settings are read, not defaulted: swapping the
	// layer kinds changes the model
	sw := withConfig(nu, "layer_types", []string{"full_attention", "sliding_attention"})
	if d := maxDiff(run(a, ids), run(writeAndOpen(t, sw, llmtest.Quant{}), ids)); d < 1e-4 {
		t.Fatalf("swapped layer types changed logits by only %g", d)
	}
}

// backendPacks reports whether the backend in use packs 4-bit matrices of
// cols columns in groups of gs into a layout of its own, asking it the way
// the loader does.
func backendPacks(t *testing.T, cols, gs int) bool {
	w := mlx.Zeros([]int{4, cols}, mlx.Float32)
	defer w.Free()
	wq, s, b, err := mlx.Quantize(w, gs, 4)
	if err != nil {
		t.Fatal(err)
	}
	q := mlx.NewQuantMatrix(wq, s, b, gs, 4)
	mlx.Free(q.Pack()...)
	defer mlx.Free(q.Arrays()...)
	return q.Packed()
}
