package mlx_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// loadAll reads every tensor of a safetensors file into arrays.
func loadAll(t *testing.T, path string) map[string]*mlx.Array {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*mlx.Array{}
	for _, name := range f.Names() {
		info, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := f.Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		dt, err := mlx.ParseDType(string(info.DType))
		if err != nil {
			t.Fatal(err)
		}
		a, err := mlx.FromBytes(raw, dt, info.Shape...)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = a
	}
	return out
}

func freeAll(m map[string]*mlx.Array) {
	for _, a := range m {
		a.Free()
	}
}

// The MLX-quantized stories260K weights dequantize bit-exactly by
// float32(s*q)+b and stay within each group's quantization error of the
// original float32 checkpoint.
func TestRealModelDequantize(t *testing.T) {
	leakFree(t)
	qdir := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	hdir := mlxtest.Assets(t, "models", "stories260K", "hf")
	qw := loadAll(t, filepath.Join(qdir, "model.safetensors"))
	defer freeAll(qw)
	hw := loadAll(t, filepath.Join(hdir, "model.safetensors"))
	defer freeAll(hw)
	n := 0
	for name, wq := range qw {
		if !strings.HasSuffix(name, ".weight") || wq.DType() != mlx.Uint32 {
			continue
		}
		base := strings.TrimSuffix(name, ".weight")
		s, b := qw[base+".scales"], qw[base+".biases"]
		w := mlx.Dequantize(wq, s, b, 32, 4)
		rows, cols := w.Dim(0), w.Dim(1)
		codes := []uint32{}
		packed := wq.Uint32s()
		for r := 0; r < rows; r++ {
			codes = append(codes, refUnpack(packed[r*cols/8:], cols, 4)...)
		}
		sc, bi := s.Float32s(), b.Float32s()
		closeTo(t, name, w.Float32s(), refDequant(codes, sc, bi, rows, cols, 32), 0, 0)
		orig := hw[name]
		if orig == nil {
			t.Fatalf("%s missing from the float checkpoint", name)
		}
		of, got := orig.Float32s(), w.Float32s()
		for i := range got {
			g := i / 32
			// half a step inside the range; MLX clips the far extreme of a
			// group, which can land up to 1.5 steps away
			bound := 0.5001
			if codes[i] == 0 || codes[i] == 15 {
				bound = 1.5
			}
			if d := math.Abs(float64(got[i] - of[i])); d > math.Abs(float64(sc[g]))*bound+1e-7 {
				t.Fatalf("%s[%d]: %v vs original %v, beyond half a step %v", name, i, got[i], of[i], sc[g])
			}
		}
		w.Free()
		n++
	}
	if n != 1+5*6 { // embedding + q,k,v,o,gate,up per layer (down_proj stays f32)
		t.Fatalf("dequantized %d tensors, want 31", n)
	}
}

// A full Llama forward pass written with the public ops reproduces the
// logits of the reference implementation for the first three greedy steps.
func TestRealModelForward(t *testing.T) {
	leakFree(t)
	dir := mlxtest.Assets(t, "models", "stories260K-4bit-g32")
	var exp struct {
		Snapshots map[string]struct {
			GreedyIDs []int       `json:"greedy_ids"`
			Logits    [][]float64 `json:"logits_first3"`
		} `json:"snapshots"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	want := exp.Snapshots["stories260K-4bit-g32"]
	w := loadAll(t, filepath.Join(dir, "model.safetensors"))
	defer freeAll(w)

	const (
		layers, heads, kvHeads, hd = 5, 8, 4, 8
		eps                        = 1e-5
	)
	qlin := func(x *mlx.Array, name string) *mlx.Array {
		return mlx.QuantizedMatmul(x, w[name+".weight"], w[name+".scales"], w[name+".biases"], true, 32, 4)
	}
	cacheK := make([]*mlx.Array, layers)
	cacheV := make([]*mlx.Array, layers)
	defer func() { mlx.Free(cacheK...); mlx.Free(cacheV...) }()

	tok := 1 // BOS
	for step := 0; step < 3; step++ {
		logits := func() *mlx.Array {
			s := mlx.NewScope()
			defer s.Close()
			ids := mlx.FromSlice([]int32{int32(tok)}, 1, 1)
			h := mlx.TakeQuantized(w["model.embed_tokens.weight"], w["model.embed_tokens.scales"], w["model.embed_tokens.biases"], ids, 32, 4)
			for l := 0; l < layers; l++ {
				p := "model.layers." + string(rune('0'+l)) + "."
				x := mlx.RMSNorm(h, w[p+"input_layernorm.weight"], eps)
				heads4 := func(y *mlx.Array, n int) *mlx.Array {
					return mlx.Transpose(mlx.Reshape(y, 1, 1, n, hd), 0, 2, 1, 3)
				}
				rope := mlx.RoPEParams{Dims: hd, Base: 10000, Offset: step}
				q := mlx.RoPE(heads4(qlin(x, p+"self_attn.q_proj"), heads), rope)
				k := mlx.RoPE(heads4(qlin(x, p+"self_attn.k_proj"), kvHeads), rope)
				v := heads4(qlin(x, p+"self_attn.v_proj"), kvHeads)
				if cacheK[l] == nil {
					cacheK[l], cacheV[l] = mlx.Copy(k), mlx.Copy(v)
				} else {
					nk := mlx.Concatenate([]*mlx.Array{cacheK[l], k}, 2)
					nv := mlx.Concatenate([]*mlx.Array{cacheV[l], v}, 2)
					cacheK[l].Free()
					cacheV[l].Free()
					cacheK[l], cacheV[l] = nk, nv
				}
				s.KeepAll(cacheK[l], cacheV[l]) // the caches outlive this step
				o := mlx.ScaledDotProductAttention(q, cacheK[l], cacheV[l], float32(1/math.Sqrt(hd)), mlx.CausalMask())
				o = mlx.Reshape(mlx.Transpose(o, 0, 2, 1, 3), 1, 1, heads*hd)
				h = mlx.Add(h, qlin(o, p+"self_attn.o_proj"))
				x = mlx.RMSNorm(h, w[p+"post_attention_layernorm.weight"], eps)
				act := mlx.Mul(mlx.Silu(qlin(x, p+"mlp.gate_proj")), qlin(x, p+"mlp.up_proj"))
				h = mlx.Add(h, mlx.MatmulT(act, w[p+"mlp.down_proj.weight"]))
			}
			h = mlx.RMSNorm(h, w["model.norm.weight"], eps)
			return s.Keep(qlin(h, "model.embed_tokens"))
		}()
		closeTo(t, "logits step "+string(rune('0'+step)), logits.Float32s(), want.Logits[step], 1e-5, 1e-4)
		am := mlx.ArgMax(logits, -1, false)
		if got := am.Ints()[0]; got != want.GreedyIDs[step] {
			t.Fatalf("step %d: greedy id %d, want %d", step, got, want.GreedyIDs[step])
		}
		tok = want.GreedyIDs[step]
		mlx.Free(logits, am)
	}
}
