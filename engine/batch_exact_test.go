package engine

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
	"hark/models/llm"
	"hark/models/nn"
)

// A batched decode step gives each row bit for bit the logits the row gets
// decoding alone, for every family the batch serves, with rows of
// different lengths, for float32, 16-bit and quantized caches: attention
// runs in each row's own cache, and the projections' kernels sum a row
// the same way at every batch size up to MaxBatchRows. The 4-bit packed
// model runs 3 rows: from 4, a CPU with AMX takes a kernel that sums in
// another order (its rows then differ from alone in the last bits).
func TestBatchedStepBitForBit(t *testing.T) {
	for _, c := range batchCases(t) {
		prompts := c.prompts
		if c.name == "qwen2-q4-packed" {
			prompts = prompts[:3]
		}
		for _, kv := range []nn.KVQuant{{Bits: nn.KVFloat32Bits}, {Bits: nn.KVHalfBits}, {Bits: 8, Group: 32}} {
			t.Run(fmt.Sprintf("%s/kv%d", c.name, kv.Bits), func(t *testing.T) {
				e, err := Load(c.dir, LoadOptions{KV: kv})
				if _, shape := nn.AsKVShapeError(err); shape {
					t.Logf("this model's heads cannot keep this cache: %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				batch := e.Model.(llm.BatchDecoder).BatchCaches()
				defer nn.FreeCaches(batch)
				alone := make([][]nn.Cache, len(prompts))
				next := make([]int, len(prompts))
				for i, p := range prompts {
					// Two caches prefilled alike: one joins the batch, the
					// other decodes alone.
					alone[i] = nn.QuantizeCaches(e.Model.NewCaches(), e.KV)
					defer nn.FreeCaches(alone[i])
					row := nn.QuantizeCaches(e.Model.NewCaches(), e.KV)
					s := mlx.NewScope()
					mlx.Eval(e.Model.Hidden(mlx.FromSlice(p, 1, len(p)), alone[i]), e.Model.Hidden(mlx.FromSlice(p, 1, len(p)), row))
					s.Close()
					for l, bc := range batch {
						if _, err := bc.(*nn.BatchCache).Add(row[l]); err != nil {
							t.Fatal(err)
						}
					}
					next[i] = p[len(p)-1]
				}
				for step := range 4 {
					s := mlx.NewScope()
					got := e.Model.Logits(e.Model.Hidden(mlx.FromSlice(next, len(next), 1), batch)).Float32s()
					vocab := len(got) / len(next)
					for i := range next {
						want := e.Model.Logits(e.Model.Hidden(mlx.FromSlice(next[i:i+1], 1, 1), alone[i])).Float32s()
						for j, w := range want {
							if g := got[i*vocab+j]; math.Float32bits(g) != math.Float32bits(w) {
								t.Fatalf("%d-bit cache, step %d, row %d, logit %d: batched %v, alone %v", kv.Bits, step, i, j, g, w)
							}
						}
						next[i] = (next[i]*31 + 7 + step) % vocab
					}
					s.Close()
				}
			})
		}
	}
}
