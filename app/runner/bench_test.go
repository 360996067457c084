package runner

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hark/engine"
	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
)

// BenchmarkStreams is aggregate decode tok/s with 1, 4 and 8 clients
// generating at once through the runner (shared leases, batched decode),
// on stories260K and on the q4 0.5B bench model (the target: 8
// streams at least 3x one). HARK_BENCH_05B_DIR keeps the generated 0.5B
// model between runs. Only decode is timed: from the moment every stream
// has its first token to the end; vs1 is the aggregate over the 1-stream
// figure of the same run; cpu-ms/tok is the process's CPU time over the
// same window per token.
func BenchmarkStreams(b *testing.B) {
	dir05 := os.Getenv("HARK_BENCH_05B_DIR")
	if dir05 == "" {
		dir05 = b.TempDir()
	}
	for _, m := range []struct {
		name   string
		dir    func() string
		tokens int
	}{
		{"stories260K", func() string { return mlxtest.Assets(b, "models", "stories260K", "hf") }, 64},
		{"05BQ4", func() string {
			if err := llmtest.Bench05B(dir05); err != nil {
				b.Fatal(err)
			}
			return dir05
		}, 24},
	} {
		b.Run(m.name, func(b *testing.B) { benchStreams(b, m.dir(), m.tokens) })
	}
}

func benchStreams(b *testing.B, dir string, tokens int) {
	r := New(Options{})
	defer r.Close()
	// Loaded before any timing.
	l, err := r.Share(context.Background(), Chat, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	l.Release()
	var one float64
	for _, n := range []int{1, 4, 8} {
		b.Run(streamsName(n), func(b *testing.B) {
			// Decode only: tokens generated from the moment every stream
			// has its first token (its prefill done) to the last one's end.
			var decoded int64
			var took time.Duration
			var cpu float64
			for i := 0; i < b.N; i++ {
				var wg, first sync.WaitGroup
				var count atomic.Int64
				var t0 time.Time
				var c0 int64
				var cpu0 float64
				first.Add(n)
				ready := make(chan struct{})
				go func() {
					first.Wait()
					t0, c0, cpu0 = time.Now(), count.Load(), processCPU()
					close(ready)
				}()
				for s := 0; s < n; s++ {
					wg.Add(1)
					go func(s int) {
						defer wg.Done()
						var once sync.Once
						defer once.Do(first.Done) // a stream that ends at once
						l, err := r.Share(context.Background(), Chat, dir, nil)
						if err != nil {
							b.Error(err)
							return
						}
						defer l.Release()
						seed := uint64(s)
						opt := engine.Options{MaxTokens: tokens, Sampling: engine.Sampling{Temperature: 0.8, Seed: &seed}}
						opt.OnToken = func(int) {
							count.Add(1)
							once.Do(first.Done)
						}
						if _, err := l.Engine.GenerateBatched(context.Background(), []int{1, 403 + s}, opt, nil); err != nil {
							b.Error(err)
						}
					}(s)
				}
				wg.Wait()
				end, cpu1 := time.Now(), processCPU()
				<-ready
				decoded += count.Load() - c0
				took += end.Sub(t0)
				cpu += cpu1 - cpu0
			}
			tps := float64(decoded) / took.Seconds()
			b.ReportMetric(tps, "tok/s")
			if cpu > 0 && decoded > 0 {
				// CPU time per token moves far less than tok/s with the
				// load of a shared machine.
				b.ReportMetric(cpu*1e3/float64(decoded), "cpu-ms/tok")
			}
			if n == 1 {
				one = tps
			} else if one > 0 {
				b.ReportMetric(tps/one, "vs1")
			}
		})
	}
}

func streamsName(n int) string { return string(rune('0'+n)) + "streams" }

// BenchmarkCachedPrefixTTFT is the time to the first token of a reply
// whose 2,000-token system prompt another request already prefilled,
// against the same prompt cold, on the tiny random qwen3 (its context
// holds 2,000 tokens; stories260K's 512 do not).
func BenchmarkCachedPrefixTTFT(b *testing.B) {
	prefixTTFT(b, (*engine.Engine).Generate)
}

// BenchmarkSharedPrefixTTFT is BenchmarkCachedPrefixTTFT through the
// batch's shared prefix trie: another client's request prefilled the
// 2,000-token system prompt, and this one copies it from the trie and
// prefills only its own tail.
func BenchmarkSharedPrefixTTFT(b *testing.B) {
	prefixTTFT(b, (*engine.Engine).GenerateBatched)
}

type generateFunc func(*engine.Engine, context.Context, []int, engine.Options, func(string) error) (*engine.Result, error)

func prefixTTFT(b *testing.B, generate generateFunc) {
	dir := mlxtest.Assets(b, "families", "qwen3-a", "hf")
	e, err := engine.Load(dir, engine.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	system := make([]int, 2000)
	for i := range system {
		system[i] = rng.IntN(997)
	}
	ask := func(tail int) time.Duration {
		prompt := append(append([]int(nil), system...), tail, tail+1, tail+2)
		res, err := generate(e, context.Background(), prompt, engine.Options{MaxTokens: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return res.Stats.TimeToFirstToken
	}
	var cold, warm time.Duration
	for i := 0; i < b.N; i++ {
		e.ResetCache()
		cold += ask(10)
		warm += ask(20 + i%50)
	}
	b.ReportMetric(float64(cold.Milliseconds())/float64(b.N), "cold-ms")
	b.ReportMetric(float64(warm.Microseconds())/1000/float64(b.N), "cached-ms")
	b.ReportMetric(100*float64(warm)/float64(cold), "cached-%")
}
