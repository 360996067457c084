package llm_test

import (
	"math"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// TestAMXPrefillLogits covers the one path the family goldens cannot: on
// CPUs with AMX, prefill matmuls (32 or more tokens, weight matrices at
// least 512 wide) with 4-bit or bf16 weights round x to bf16, and the
// goldens' models (hidden 64) never get there; so do bf16 weights on
// CPUs with AVX-512 BF16 (kernels/dpbf16.go). A 512-wide qwen2 model's
// logits at every prompt position, from one 64-token batch, are held to
// the float32 path's (HARK_AMX=0 and HARK_BF16DOT=0, same process and
// weights): within amxLogitTol of the logits' RMS everywhere, and the
// same argmax at all but a few positions where the top two are closer
// than that.
func TestAMXPrefillLogits(t *testing.T) {
	info, err := mlx.Probe("cpu")
	amx, dot := err == nil && strings.Contains(info.Detail, "amx"), err == nil && strings.Contains(info.Detail, "avx512bf16")
	if !amx && !dot {
		t.Skip("this CPU has neither AMX nor AVX-512 BF16: prefill has no bf16 path to check here")
	}
	// x rounded to bf16 is off by at most 2^-8 relative per matmul input;
	// the errors of k products are independent, so an output moves by
	// about 2^-8 of its own size per matmul, and 2 layers of 4 matmuls
	// plus the head add up to a few 2^-8: 2^-4 (6%) leaves room for the
	// residual stream's cancellations and is still far below what a wrong
	// kernel (a swapped tile, a lost k block) produces.
	const amxLogitTol = 1.0 / 16
	shape := llmtest.Shape{Hidden: 512, Layers: 2, Heads: 8, KVHeads: 2, HeadDim: 64, Intermediate: 1024, Vocab: 512}
	for _, c := range []struct {
		name string
		q    llmtest.Quant
	}{{"q4", llmtest.Quant{Bits: 4, GroupSize: 64}}, {"bf16", llmtest.Quant{Float: safetensors.BF16}}} {
		t.Run(c.name, func(t *testing.T) {
			if !amx && c.q.Bits != 0 {
				t.Skip("no AMX: 4-bit weights keep the float32 path")
			}
			dir := t.TempDir()
			if err := llmtest.Llama(shape, "qwen2", true).Write(dir, 3, c.q); err != nil {
				t.Fatal(err)
			}
			m, _, err := llm.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			const n = 64
			ids := make([]int, n)
			for i := range ids {
				ids[i] = (i*37 + 5) % shape.Vocab
			}
			logits := func() []float32 {
				tok := mlx.FromSlice(ids, 1, n)
				h := m.Hidden(tok, m.NewCaches())
				lg := m.Logits(h)
				out := lg.Float32s()
				mlx.Free(tok, h, lg)
				return out
			}
			t.Setenv("HARK_AMX", "0")
			t.Setenv("HARK_BF16DOT", "0")
			ref := logits()
			t.Setenv("HARK_AMX", "")
			t.Setenv("HARK_BF16DOT", "")
			got := logits()
			var ss, worst float64
			for i := range ref {
				ss += float64(ref[i]) * float64(ref[i])
				worst = max(worst, math.Abs(float64(got[i]-ref[i])))
			}
			rms := math.Sqrt(ss / float64(len(ref)))
			if worst == 0 {
				t.Fatalf("bf16-rounding logits equal the float32 path's exactly: the AMX or VDPBF16PS path did not run")
			}
			flips, close := 0, 0
			for p := range n {
				r, g := ref[p*shape.Vocab:(p+1)*shape.Vocab], got[p*shape.Vocab:(p+1)*shape.Vocab]
				a, b := argmax32(r), argmax32(g)
				if a != b {
					flips++
					if math.Abs(float64(r[a]-r[b])) <= amxLogitTol*rms {
						close++
					}
				}
			}
			t.Logf("%s: max |Δlogit| %.4g = %.4f of the logits' RMS %.4g; argmax differs at %d of %d positions", c.name, worst, worst/rms, rms, flips, n)
			if worst > amxLogitTol*rms {
				t.Errorf("max |Δlogit| %.4g exceeds %.4g (%.3f of RMS %.4g)", worst, amxLogitTol*rms, amxLogitTol, rms)
			}
			if flips != close {
				t.Errorf("argmax differs at %d positions, %d of them not near-ties", flips, flips-close)
			}
		})
	}
}

func argmax32(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
