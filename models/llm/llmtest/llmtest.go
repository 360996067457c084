// Package llmtest writes tiny random checkpoints with real Hugging Face
// tensor names and config.json files, in float32 or MLX-quantized form, so
// graph and engine tests (and benchmarks) can load every supported family
// through the same path as a downloaded model.
package llmtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"hark/mlx"
	"hark/mlx/safetensors"
)

// Shape is the size of a generated model.
type Shape struct {
	Hidden, Layers, Heads, KVHeads, HeadDim, Intermediate, Vocab int
}

// Tiny is small enough for exhaustive invariant tests, with GQA and
// dimensions that divide by MLX's smallest group size.
var Tiny = Shape{Hidden: 64, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, Intermediate: 96, Vocab: 128}

// Tensor is one generated tensor. Kind selects the init: a matrix scaled for
// unit-variance activations, a norm weight near Norm, or a bias.
type Tensor struct {
	Name  string
	Shape []int
	Kind  Kind
}

// Kind is how a tensor is initialised.
type Kind int

const (
	Matrix    Kind = iota // N(0, 1/in); quantized when the input size allows
	Embedding             // N(0, 1); quantized when the dims allow
	Norm                  // 1 + N(0, 0.1)
	NormDelta             // N(0, 0.1): Gemma's norms store w for (1 + w)
	Bias                  // N(0, 0.1)
	// InOut is a stacked [..., in, out] matrix (GPT-OSS's experts):
	// N(0, 1/in), never quantized.
	InOut
	// Stacked is a stacked [..., out, in] matrix stored without a .weight
	// suffix (Qwen3.5-MoE's fused experts): N(0, 1/in), never quantized.
	Stacked
)

// Quant selects MLX quantization of the matrices and embeddings; the zero
// value writes float32.
type Quant struct {
	Bits, GroupSize int
	// Dequantized writes the quantized values back as float32 tensors under
	// the plain names: the same model, without quantized kernels.
	Dequantized bool
	// Float is the dtype of unquantized tensors: F32 (default), F16 or
	// BF16. RoundTo keeps F32 storage but rounds values to that dtype
	// first, giving a float32 twin of a half-precision checkpoint.
	Float, RoundTo safetensors.DType
	// Overrides quantize some modules (by path, e.g.
	// "model.layers.0.mlp.down_proj") with other [bits, group size], written
	// to config.json the way mlx-lm records mixed quantization.
	Overrides map[string][2]int
	// MXFP4 quantizes the modules whose path contains any of these in
	// MLX's mxfp4 mode (groups of 32, uint8 E8M0 scales, no biases),
	// recorded per module with "mode": "mxfp4".
	MXFP4 []string
	// ReleasedMXFP4 writes the stacked InOut expert matrices [E, in, out]
	// as GPT-OSS is released: MXFP4 name_blocks [E, out, in/32, 16] and
	// name_scales [E, out, in/32] (uint8), with quantization_config
	// quant_method "mxfp4"; everything else stays float. With Dequantized
	// the experts are written as the float values those decode to.
	ReleasedMXFP4 bool
}

// mxfp4 reports whether q puts the module path in mxfp4 mode.
func (q Quant) mxfp4(path string) bool {
	for _, p := range q.MXFP4 {
		if strings.Contains(path, p) {
			return true
		}
	}
	return false
}

// Model is a generated checkpoint.
type Model struct {
	Config  map[string]any
	Tensors []Tensor
	// MLXLayout, when set, is the same architecture under the tensor
	// names mlx-lm's converter writes (its sanitize step renames and
	// splits some tensors); Write uses it for quantized checkpoints, which
	// only mlx-lm makes.
	MLXLayout *Model
}

// Write saves config.json and model.safetensors into dir, drawing values
// from seed (the same seed gives the same weights whatever q is).
func (m Model) Write(dir string, seed uint64, q Quant) error {
	if q.Bits > 0 && m.MLXLayout != nil {
		return m.MLXLayout.Write(dir, seed, q)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	var out []safetensors.Tensor
	var mxPaths []string
	for _, t := range m.Tensors {
		vals := fill(rng, t)
		rows, cols := 1, t.Shape[len(t.Shape)-1]
		for _, d := range t.Shape[:len(t.Shape)-1] {
			rows *= d
		}
		tq := q
		if o, ok := q.Overrides[strings.TrimSuffix(t.Name, ".weight")]; ok {
			tq.Bits, tq.GroupSize = o[0], o[1]
		}
		if q.ReleasedMXFP4 && t.Kind == InOut {
			ts, err := releasedMXFP4(t, vals, q.Dequantized)
			if err != nil {
				return err
			}
			out = append(out, ts...)
			continue
		}
		path := strings.TrimSuffix(t.Name, ".weight")
		if q.Bits > 0 && q.mxfp4(path) {
			tq.Bits, tq.GroupSize = 4, 32
		}
		quantize := q.Bits > 0 && (t.Kind == Matrix || t.Kind == Embedding) && cols%tq.GroupSize == 0
		if !quantize {
			out = append(out, floatTensor(t.Name, t.Shape, vals, q.Float, q.RoundTo))
			continue
		}
		if q.mxfp4(path) {
			ts, err := quantizedMXFP4(t, vals, rows, cols, q.Dequantized)
			if err != nil {
				return err
			}
			out = append(out, ts...)
			mxPaths = append(mxPaths, path)
			continue
		}
		ts, err := quantized(t, vals, rows, cols, tq)
		if err != nil {
			return err
		}
		out = append(out, ts...)
	}
	if q.Bits > 0 && !q.Dequantized {
		qc := map[string]any{"group_size": q.GroupSize, "bits": q.Bits}
		for path, o := range q.Overrides {
			qc[path] = map[string]any{"bits": o[0], "group_size": o[1]}
		}
		for _, path := range mxPaths {
			qc[path] = map[string]any{"bits": 4, "group_size": 32, "mode": "mxfp4"}
		}
		cfg["quantization"] = qc
	}
	if q.ReleasedMXFP4 && !q.Dequantized {
		cfg["quantization_config"] = map[string]any{"quant_method": "mxfp4", "modules_to_not_convert": []string{"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"}}
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644); err != nil {
		return err
	}
	return safetensors.Write(filepath.Join(dir, "model.safetensors"), out, nil)
}

func fill(rng *rand.Rand, t Tensor) []float32 {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	v := make([]float32, n)
	std, mean := 0.1, 0.0
	switch t.Kind {
	case Matrix, Stacked:
		std = 1 / math.Sqrt(float64(t.Shape[len(t.Shape)-1]))
	case InOut:
		std = 1 / math.Sqrt(float64(t.Shape[len(t.Shape)-2]))
	case Embedding:
		std = 1
	case Norm:
		mean = 1
	}
	for i := range v {
		v[i] = float32(mean + std*rng.NormFloat64())
	}
	return v
}

// floatTensor stores v as dt (F32 when empty), after rounding through
// round when that is set.
func floatTensor(name string, shape []int, v []float32, dt, round safetensors.DType) safetensors.Tensor {
	conv := map[safetensors.DType]func(float32) uint16{safetensors.F16: mlx.F32ToF16, safetensors.BF16: mlx.F32ToBF16}
	back := map[safetensors.DType]func(uint16) float32{safetensors.F16: mlx.F16ToF32, safetensors.BF16: mlx.BF16ToF32}
	if f := conv[round]; f != nil {
		r := make([]float32, len(v))
		for i, x := range v {
			r[i] = back[round](f(x))
		}
		v = r
	}
	f := conv[dt]
	if f == nil {
		return f32Tensor(name, shape, v)
	}
	data := make([]byte, 2*len(v))
	for i, x := range v {
		h := f(x)
		data[2*i], data[2*i+1] = byte(h), byte(h>>8)
	}
	return safetensors.Tensor{Name: name, DType: dt, Shape: shape, Data: data}
}

func f32Tensor(name string, shape []int, v []float32) safetensors.Tensor {
	return safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: safetensors.Float32Bytes(v)}
}

// quantized quantizes with MLX's own algorithm and returns either the
// packed triple or its float32 dequantization.
func quantized(t Tensor, vals []float32, rows, cols int, q Quant) ([]safetensors.Tensor, error) {
	w := mlx.FromSlice(vals, rows, cols)
	defer w.Free()
	wq, scales, biases, err := mlx.Quantize(w, q.GroupSize, q.Bits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	defer mlx.Free(wq, scales, biases)
	base := t.Name[:len(t.Name)-len(".weight")]
	if q.Dequantized {
		d := mlx.Dequantize(wq, scales, biases, q.GroupSize, q.Bits)
		defer d.Free()
		return []safetensors.Tensor{f32Tensor(t.Name, t.Shape, d.Float32s())}, nil
	}
	lead := t.Shape[:len(t.Shape)-1]
	shape := func(last int) []int { return append(append([]int(nil), lead...), last) }
	return []safetensors.Tensor{
		{Name: t.Name, DType: safetensors.U32, Shape: shape(cols * q.Bits / 32), Data: safetensors.Uint32Bytes(wq.Uint32s())},
		f32Tensor(base+".scales", shape(cols/q.GroupSize), scales.Float32s()),
		f32Tensor(base+".biases", shape(cols/q.GroupSize), biases.Float32s()),
	}, nil
}

// quantizedMXFP4 is quantized in mxfp4 mode: packed words and uint8
// scales, or their float32 dequantization.
func quantizedMXFP4(t Tensor, vals []float32, rows, cols int, dequantized bool) ([]safetensors.Tensor, error) {
	w := mlx.FromSlice(vals, rows, cols)
	defer w.Free()
	wq, scales, err := mlx.QuantizeMXFP4(w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	defer mlx.Free(wq, scales)
	if dequantized {
		d := mlx.Dequantize(wq, scales, nil, 32, 4)
		defer d.Free()
		return []safetensors.Tensor{f32Tensor(t.Name, t.Shape, d.Float32s())}, nil
	}
	lead := t.Shape[:len(t.Shape)-1]
	shape := func(last int) []int { return append(append([]int(nil), lead...), last) }
	return []safetensors.Tensor{
		{Name: t.Name, DType: safetensors.U32, Shape: shape(cols / 8), Data: safetensors.Uint32Bytes(wq.Uint32s())},
		{Name: strings.TrimSuffix(t.Name, ".weight") + ".scales", DType: safetensors.U8, Shape: shape(cols / 32), Data: scales.Uint8s()},
	}, nil
}

// releasedMXFP4 quantizes a stacked [E, in, out] matrix as GPT-OSS's
// release stores it: each expert transposed to [out, in] rows, in MXFP4
// blocks of 32 along in.
func releasedMXFP4(t Tensor, vals []float32, dequantized bool) ([]safetensors.Tensor, error) {
	e, in, out := t.Shape[0], t.Shape[1], t.Shape[2]
	rows := make([]float32, len(vals)) // [E, out, in]
	for x := 0; x < e; x++ {
		for i := 0; i < in; i++ {
			for o := 0; o < out; o++ {
				rows[(x*out+o)*in+i] = vals[(x*in+i)*out+o]
			}
		}
	}
	w := mlx.FromSlice(rows, e*out, in)
	defer w.Free()
	wq, scales, err := mlx.QuantizeMXFP4(w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	defer mlx.Free(wq, scales)
	if dequantized {
		d := mlx.Dequantize(wq, scales, nil, 32, 4)
		dv := d.Float32s()
		d.Free()
		for x := 0; x < e; x++ {
			for o := 0; o < out; o++ {
				for i := 0; i < in; i++ {
					vals[(x*in+i)*out+o] = dv[(x*out+o)*in+i]
				}
			}
		}
		return []safetensors.Tensor{f32Tensor(t.Name, t.Shape, vals)}, nil
	}
	return []safetensors.Tensor{
		{Name: t.Name + "_blocks", DType: safetensors.U8, Shape: []int{e, out, in / 32, 16}, Data: safetensors.Uint32Bytes(wq.Uint32s())},
		{Name: t.Name + "_scales", DType: safetensors.U8, Shape: []int{e, out, in / 32}, Data: scales.Uint8s()},
	}, nil
}

// common config fields of the Llama-like families.
func baseConfig(s Shape, arch, modelType string) map[string]any {
	return map[string]any{
		"architectures": []string{arch}, "model_type": modelType,
		"hidden_size": s.Hidden, "num_hidden_layers": s.Layers, "intermediate_size": s.Intermediate,
		"num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads, "head_dim": s.HeadDim,
		"vocab_size": s.Vocab, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
		"max_position_embeddings": 2048, "hidden_act": "silu", "eos_token_id": 2, "bos_token_id": 1,
		"torch_dtype": "float32",
	}
}

func mat(name string, out, in int) Tensor {
	return Tensor{Name: name, Shape: []int{out, in}, Kind: Matrix}
}

// Llama is a Llama-family checkpoint: family "llama", "mistral", "qwen2"
// (q/k/v biases) or "qwen3" (q/k norms). tied leaves out lm_head.
func Llama(s Shape, family string, tied bool) Model {
	arch := map[string]string{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}[family]
	cfg := baseConfig(s, arch, family)
	cfg["tie_word_embeddings"] = tied
	ts := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		ts = append(ts,
			Tensor{Name: p + "input_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(p+"self_attn.q_proj.weight", s.Heads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.k_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.v_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.o_proj.weight", s.Hidden, s.Heads*s.HeadDim),
			Tensor{Name: p + "post_attention_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate),
		)
		if family == "qwen2" {
			for _, n := range []struct {
				name string
				size int
			}{{"q_proj", s.Heads * s.HeadDim}, {"k_proj", s.KVHeads * s.HeadDim}, {"v_proj", s.KVHeads * s.HeadDim}} {
				ts = append(ts, Tensor{Name: p + "self_attn." + n.name + ".bias", Shape: []int{n.size}, Kind: Bias})
			}
		}
		if family == "qwen3" {
			ts = append(ts,
				Tensor{Name: p + "self_attn.q_norm.weight", Shape: []int{s.HeadDim}, Kind: Norm},
				Tensor{Name: p + "self_attn.k_norm.weight", Shape: []int{s.HeadDim}, Kind: Norm})
		}
	}
	ts = append(ts, Tensor{Name: "model.norm.weight", Shape: []int{s.Hidden}, Kind: Norm})
	if !tied {
		ts = append(ts, mat("lm_head.weight", s.Vocab, s.Hidden))
	}
	return Model{Config: cfg, Tensors: ts}
}

// Phi3 is a Phi-3 checkpoint with fused qkv_proj and gate_up_proj.
func Phi3(s Shape, partialRotary float64) Model {
	cfg := baseConfig(s, "Phi3ForCausalLM", "phi3")
	cfg["tie_word_embeddings"] = false
	cfg["partial_rotary_factor"] = partialRotary
	ts := []Tensor{{Name: "model.embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		ts = append(ts,
			Tensor{Name: p + "input_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(p+"self_attn.qkv_proj.weight", (s.Heads+2*s.KVHeads)*s.HeadDim, s.Hidden),
			mat(p+"self_attn.o_proj.weight", s.Hidden, s.Heads*s.HeadDim),
			Tensor{Name: p + "post_attention_layernorm.weight", Shape: []int{s.Hidden}, Kind: Norm},
			mat(p+"mlp.gate_up_proj.weight", 2*s.Intermediate, s.Hidden),
			mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate),
		)
	}
	ts = append(ts, Tensor{Name: "model.norm.weight", Shape: []int{s.Hidden}, Kind: Norm}, mat("lm_head.weight", s.Vocab, s.Hidden))
	return Model{Config: cfg, Tensors: ts}
}

// Gemma3 is a Gemma 3 text checkpoint with the given sliding window and
// pattern (every pattern-th layer global). nested writes the multimodal
// form: config under text_config, weights under language_model.model.
func Gemma3(s Shape, window, pattern int, nested bool) Model {
	text := map[string]any{
		"model_type": "gemma3_text", "hidden_size": s.Hidden, "num_hidden_layers": s.Layers,
		"intermediate_size": s.Intermediate, "num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads,
		"head_dim": s.HeadDim, "vocab_size": s.Vocab, "rms_norm_eps": 1e-6, "rope_theta": 1e6,
		"rope_local_base_freq": 1e4, "query_pre_attn_scalar": s.HeadDim, "sliding_window": window,
		"sliding_window_pattern": pattern, "max_position_embeddings": 4096,
		"hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": 30.0,
		"rope_scaling": map[string]any{"rope_type": "linear", "factor": 8.0},
	}
	pre := "model."
	var cfg map[string]any
	if nested {
		pre = "language_model.model."
		cfg = map[string]any{"architectures": []string{"Gemma3ForConditionalGeneration"}, "model_type": "gemma3", "text_config": text, "eos_token_id": []int{1, 106}}
	} else {
		cfg = text
		cfg["architectures"] = []string{"Gemma3ForCausalLM"}
		cfg["eos_token_id"] = []int{1, 106}
	}
	ts := []Tensor{{Name: pre + "embed_tokens.weight", Shape: []int{s.Vocab, s.Hidden}, Kind: Embedding}}
	norm := func(name string, n int) Tensor { return Tensor{Name: name, Shape: []int{n}, Kind: NormDelta} }
	for i := 0; i < s.Layers; i++ {
		p := fmt.Sprintf("%slayers.%d.", pre, i)
		ts = append(ts,
			norm(p+"input_layernorm.weight", s.Hidden),
			mat(p+"self_attn.q_proj.weight", s.Heads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.k_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.v_proj.weight", s.KVHeads*s.HeadDim, s.Hidden),
			mat(p+"self_attn.o_proj.weight", s.Hidden, s.Heads*s.HeadDim),
			norm(p+"self_attn.q_norm.weight", s.HeadDim),
			norm(p+"self_attn.k_norm.weight", s.HeadDim),
			norm(p+"post_attention_layernorm.weight", s.Hidden),
			norm(p+"pre_feedforward_layernorm.weight", s.Hidden),
			norm(p+"post_feedforward_layernorm.weight", s.Hidden),
			mat(p+"mlp.gate_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.up_proj.weight", s.Intermediate, s.Hidden),
			mat(p+"mlp.down_proj.weight", s.Hidden, s.Intermediate),
		)
	}
	ts = append(ts, norm(pre+"norm.weight", s.Hidden))
	if nested {
		// a vision tower the text graph must skip
		ts = append(ts, Tensor{Name: "vision_tower.vision_model.post_layernorm.weight", Shape: []int{8}, Kind: Norm})
	}
	return Model{Config: cfg, Tensors: ts}
}
