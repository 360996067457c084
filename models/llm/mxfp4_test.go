package llm_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// e2m1 is an FP4 code's value: sign, two exponent bits (bias 1, 0 for
// subnormals), one mantissa bit.
func e2m1(c uint8) float64 {
	sign := 1.0
	if c&8 != 0 {
		sign = -1
	}
	e, m := int(c>>1&3), float64(c&1)
	if e == 0 {
		return sign * 0.5 * m
	}
	return sign * math.Ldexp(1+0.5*m, e-1)
}

// A GPT-OSS checkpoint with MXFP4 experts, as released, computes what a
// float checkpoint holding the decoded experts does.
func TestGptOSSMXFP4Experts(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
	base := t.TempDir()
	if err := gen.Write(base, 9, llmtest.Quant{}); err != nil {
		t.Fatal(err)
	}
	set, err := safetensors.OpenIndex(base)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	var packed, float []safetensors.Tensor
	for _, n := range set.Names() {
		info, err := set.Tensor(n)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := set.View(n)
		if err != nil {
			t.Fatal(err)
		}
		ten := safetensors.Tensor{Name: n, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), raw...)}
		if !strings.HasSuffix(n, "experts.gate_up_proj") && !strings.HasSuffix(n, "experts.down_proj") {
			packed, float = append(packed, ten), append(float, ten)
			continue
		}
		e, in, out := info.Shape[0], info.Shape[1], info.Shape[2]
		blocks := make([]byte, e*out*in/2)
		scales := make([]byte, e*out*in/32)
		for i := range blocks {
			blocks[i] = byte(rng.IntN(256))
		}
		for i := range scales {
			scales[i] = byte(122 + rng.IntN(6))
		}
		vals := make([]float32, e*in*out) // [E, in, out]: the decoded rows transposed
		for x := 0; x < e; x++ {
			for o := 0; o < out; o++ {
				for i := 0; i < in; i++ {
					row := (x*out+o)*in + i
					by := blocks[row/2]
					code := by & 15
					if i%2 == 1 {
						code = by >> 4
					}
					vals[(x*in+i)*out+o] = float32(e2m1(code) * math.Pow(2, float64(scales[row/32])-127))
				}
			}
		}
		packed = append(packed,
			safetensors.Tensor{Name: n + "_blocks", DType: safetensors.U8, Shape: []int{e, out, in / 32, 16}, Data: blocks},
			safetensors.Tensor{Name: n + "_scales", DType: safetensors.U8, Shape: []int{e, out, in / 32}, Data: scales})
		float = append(float, safetensors.Tensor{Name: n, DType: safetensors.F32, Shape: info.Shape, Data: safetensors.Float32Bytes(vals)})
	}
	cfg, err := os.ReadFile(filepath.Join(base, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	// the packed checkpoint's config says so, as released ones do
	var m map[string]any
	if err := json.Unmarshal(cfg, &m); err != nil {
		t.Fatal(err)
	}
	m["quantization_config"] = map[string]any{"quant_method": "mxfp4", "modules_to_not_convert": []string{"model.layers.*.self_attn", "lm_head"}}
	packedCfg, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, ts := range [][]safetensors.Tensor{packed, float} {
		c := cfg
		if i == 0 {
			c = packedCfg
		}
		if err := os.WriteFile(filepath.Join(dirs[i], "config.json"), c, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := safetensors.Write(filepath.Join(dirs[i], "model.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
	}
	ids := randomTokens(10, llmtest.Tiny.Vocab)
	mx, fl := openDir(t, dirs[0]), openDir(t, dirs[1])
	if d := maxDiff(run(mx, ids), run(fl, ids)); d > 1e-5 {
		t.Errorf("MXFP4 experts differ from their decoded float copy by %g", d)
	}
}

func openDir(t *testing.T, dir string) llm.Model {
	t.Helper()
	m, _, err := llm.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// mlx-lm's GPT-OSS with its experts in MLX's mxfp4 mode and the rest in
// 8-bit affine groups of 64 (the mlx-community "MXFP4-Q8" recipe) computes
// what its dequantized float32 copy does, holding the experts at 4.25 bits
// a weight.
func TestGptOSSMLXMXFP4MatchesDequantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
	q := llmtest.Quant{Bits: 8, GroupSize: 64, MXFP4: []string{"mlp.experts."}}
	qm := writeAndOpen(t, gen, q)
	dq := q
	dq.Dequantized = true
	dm := writeAndOpen(t, gen, dq)
	fm := writeAndOpen(t, gen, llmtest.Quant{})
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	if d := maxDiff(run(qm, ids), run(dm, ids)); d > tol {
		t.Errorf("mxfp4/8-bit model differs from its dequantized copy by %g", d)
	}
	if d := maxDiff(run(qm, ids), run(fm, ids)); d < 1e-3 {
		t.Errorf("quantized model equals the float original within %g: quantization not applied?", d)
	}
	// experts: 3 matrices of [E, I, H] at 4 bits plus a scale byte per 32
	s := llmtest.Tiny
	experts := int64(s.Layers * 4 * 3 * s.Intermediate * s.Hidden)
	if got, f32 := qm.Info().WeightBytes, fm.Info().WeightBytes; got > f32/3 || got < experts*17/32 {
		t.Errorf("weights hold %d bytes (float32 %d, mxfp4 experts alone %d)", got, f32, experts*17/32)
	}
}

// The generator's released-MXFP4 checkpoints (what the RSS benchmark
// loads) compute what their decoded float copies do, and hold the experts
// packed: 17 bytes per 32 weights instead of 128.
func TestGptOSSReleasedMXFP4Generated(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
	q := llmtest.Quant{ReleasedMXFP4: true}
	qm := writeAndOpen(t, gen, q)
	q.Dequantized = true
	dm := writeAndOpen(t, gen, q)
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	if d := maxDiff(run(qm, ids), run(dm, ids)); d > tol {
		t.Errorf("released MXFP4 differs from its decoded copy by %g", d)
	}
	s := llmtest.Tiny
	experts := int64(s.Layers * 4 * 3 * s.Intermediate * s.Hidden)
	if saved := dm.Info().WeightBytes - qm.Info().WeightBytes; saved != experts*4-experts*17/32 {
		t.Errorf("MXFP4 model holds %d bytes less than float32, want %d (experts at 17/32 byte a weight)", saved, experts*4-experts*17/32)
	}
}

// Checkpoints that claim MXFP4 but do not hold it are refused naming the
// tensor: blocks of another dtype, and mlx-lm mxfp4 modules with biases.
func TestMXFP4BadInput(t *testing.T) {
	mlxtest.NoLeaks(t)
	gen := llmtest.GptOSS(llmtest.Tiny, 4, 4, 2, false)
	for name, c := range map[string]struct {
		q      llmtest.Quant
		tensor string // renamed or retyped
		want   string
	}{
		"blocks not U8": {llmtest.Quant{ReleasedMXFP4: true}, "model.layers.0.mlp.experts.down_proj_blocks", "tensor model.layers.0.mlp.experts.down_proj_blocks is I8, MXFP4 blocks are U8"},
		"mxfp4 with biases": {llmtest.Quant{Bits: 4, GroupSize: 32, MXFP4: []string{"mlp.experts."}}, "model.layers.1.mlp.experts.up_proj.biases",
			"model.layers.1.mlp.experts.up_proj: mxfp4 quantization has no biases, but model.layers.1.mlp.experts.up_proj.biases is there"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := gen.Write(dir, 3, c.q); err != nil {
				t.Fatal(err)
			}
			set, err := safetensors.OpenIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			var ts []safetensors.Tensor
			for _, n := range set.Names() {
				info, _ := set.Tensor(n)
				raw, _ := set.View(n)
				ts = append(ts, safetensors.Tensor{Name: n, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), raw...)})
			}
			set.Close()
			switch name {
			case "blocks not U8":
				for i := range ts {
					if ts[i].Name == c.tensor {
						ts[i].DType = safetensors.I8
					}
				}
			default: // an affine-style biases tensor beside the mxfp4 scales
				scales := strings.TrimSuffix(c.tensor, ".biases") + ".scales"
				for _, x := range ts {
					if x.Name == scales {
						ts = append(ts, safetensors.Tensor{Name: c.tensor, DType: safetensors.F32, Shape: x.Shape, Data: make([]byte, 4*len(x.Data))})
					}
				}
			}
			if err := safetensors.Write(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
				t.Fatal(err)
			}
			m, _, err := llm.Open(dir)
			if err == nil {
				m.Close()
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to say %q", err, c.want)
			}
		})
	}
}

// Every matrix and the embedding in mxfp4 mode (mlx-lm's --q-mode mxfp4):
// linear layers, fused projections and the embedding lookup take MXFP4
// QuantMatrix values and compute what the dequantized copy does.
func TestMXFP4EverywhereMatchesDequantized(t *testing.T) {
	mlxtest.NoLeaks(t)
	ids := randomTokens(9, llmtest.Tiny.Vocab)
	for _, f := range []family{{"llama", llmtest.Llama(llmtest.Tiny, "llama", false)}, {"phi3", llmtest.Phi3(llmtest.Tiny, 0.5)}} {
		t.Run(f.name, func(t *testing.T) {
			q := llmtest.Quant{Bits: 4, GroupSize: 32, MXFP4: []string{"model.", "lm_head"}}
			qm := writeAndOpen(t, f.gen, q)
			dq := q
			dq.Dequantized = true
			dm := writeAndOpen(t, f.gen, dq)
			if d := maxDiff(run(qm, ids), run(dm, ids)); d > tol {
				t.Errorf("mxfp4 model differs from its dequantized copy by %g", d)
			}
			if fm := writeAndOpen(t, f.gen, llmtest.Quant{}); qm.Info().WeightBytes*6 > fm.Info().WeightBytes {
				t.Errorf("mxfp4 model holds %d bytes, float32 %d: not 4.25 bits a weight", qm.Info().WeightBytes, fm.Info().WeightBytes)
			}
		})
	}
}
