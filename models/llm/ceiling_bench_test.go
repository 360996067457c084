package llm_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"hark/mlx"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// benchPrefillVsSgemm times n-token prompts as benchPrefill does and,
// alternating with each prompt, a float32 matrix product of the same
// batch through the model's largest projection shape (x [n, hidden] times
// a float32 [intermediate, hidden]ᵀ): the sgemm ceiling of issue 19, on the
// same backend and the same minute of the shared machine. %sgemm is the
// prompt's matrix GFLOP/s (every projection and the attention products;
// the output head runs on the last position only) over that ceiling.
func benchPrefillVsSgemm(b *testing.B, m llm.Model, s llmtest.Shape, n int) {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = (i*7 + 3) % m.Info().VocabSize
	}
	r := rand.New(rand.NewPCG(9, 9))
	xs, ws := make([]float32, n*s.Hidden), make([]float32, s.Intermediate*s.Hidden)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	for i := range ws {
		ws[i] = float32(r.NormFloat64() * 0.05)
	}
	x, w := mlx.FromSlice(xs, n, s.Hidden), mlx.FromSlice(ws, s.Intermediate, s.Hidden)
	defer mlx.Free(x, w)
	sgemm := func() time.Duration {
		t0 := time.Now()
		y := mlx.MatmulT(x, w)
		if err := mlx.Eval(y); err != nil {
			b.Fatal(err)
		}
		y.Free()
		return time.Since(t0)
	}
	sgemm() // warm up threads and pages
	var tp, ts time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		tok := mlx.FromSlice(ids, 1, n)
		h := m.Hidden(tok, m.NewCaches())
		last := mlx.SliceAxis(h, 1, n-1, n)
		lg := m.Logits(last)
		_ = lg.Float32s()
		mlx.Free(tok, h, last, lg)
		tp += time.Since(t0)
		b.StopTimer()
		ts += sgemm()
		b.StartTimer()
	}
	b.StopTimer()
	qkv := s.Heads*s.HeadDim + 2*s.KVHeads*s.HeadDim
	perLayer := s.Hidden*qkv + s.Heads*s.HeadDim*s.Hidden + 3*s.Hidden*s.Intermediate
	flop := 2*float64(n)*float64(s.Layers*perLayer) + 2*float64(s.Hidden*s.Vocab) +
		2*float64(s.Layers*s.Heads*s.HeadDim)*float64(n)*float64(n+1) // QKᵀ and PV, causal
	gf := flop * float64(b.N) / tp.Seconds() / 1e9
	ceil := 2 * float64(n*s.Hidden*s.Intermediate) * float64(b.N) / ts.Seconds() / 1e9
	b.ReportMetric(float64(n*b.N)/tp.Seconds(), "tok/s")
	b.ReportMetric(gf, "GFLOP/s")
	b.ReportMetric(ceil, "GFLOP/s-sgemm")
	b.ReportMetric(100*gf/ceil, "%sgemm")
}
