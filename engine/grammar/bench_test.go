package grammar

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hark/engine"
	"hark/mlx/mlxtest"
	"hark/models/llm/llmtest"
	"hark/models/tokenizer"
)

// benchSchema and benchDoc are a typical structured reply: strings, an
// enum, numbers with bounds, an array of objects.
const benchSchema = `{"type":"object","properties":{
 "title":{"type":"string","maxLength":80},
 "summary":{"type":"string"},
 "sentiment":{"enum":["positive","neutral","negative"]},
 "score":{"type":"number","minimum":0,"maximum":1},
 "speakers":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"turns":{"type":"integer","minimum":0}},"required":["name","turns"]}}},
 "required":["title","summary","sentiment","score","speakers"],"additionalProperties":false}`

const benchDoc = `{"title": "Weekly planning call", "summary": "The team reviewed the release schedule, agreed to move the beta by one week, and assigned owners for the remaining bugs in the audio pipeline.", "sentiment": "neutral", "score": 0.62, "speakers": [{"name": "Alice", "turns": 14}, {"name": "Bob", "turns": 9}, {"name": "Chen Wei", "turns": 21}]}`

// The q4 0.5B bench model's vocabulary (models/llm/bench_test.go) is
// Qwen2.5's: 151,936 logits, of which the Qwen tokenizer uses 151,669.
const benchVocab = 151936

func benchTokenizer(b *testing.B) *tokenizer.Tokenizer {
	tok, err := tokenizer.Load(filepath.Join(mlxtest.Assets(b, "tokenizers", "qwen3"), "tokenizer.json"))
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// BenchmarkConstrainedStep is the per-token cost structured output adds to
// decoding: the mask over 151,936 logits and the advance, replaying a
// typical reply token by token (ns/op is per token). Compare with
// Benchmark05BQ4/decode (models/llm), whose ns/op is one decode step; the
// target is at most 15% of it. BenchmarkJSONSchemaDecode05B runs both in
// one process.
func BenchmarkConstrainedStep(b *testing.B) {
	tok := benchTokenizer(b)
	v := NewVocab(tok, benchVocab)
	g, err := Compile([]byte(benchSchema), v)
	if err != nil {
		b.Fatal(err)
	}
	ids := tok.Encode(benchDoc, false)
	if !g.Accepts([]byte(benchDoc)) {
		b.Fatal("the grammar rejects the bench document")
	}
	logits := make([]float32, benchVocab)
	b.ResetTimer()
	var s *State
	pos := len(ids)
	for i := 0; i < b.N; i++ {
		if pos == len(ids) {
			s, pos = g.Start(), 0
		}
		if err := s.Mask(logits, 0); err != nil {
			b.Fatal(err)
		}
		if err := s.Advance(ids[pos]); err != nil {
			b.Fatalf("token %d (%q): %v", pos, tok.Token(ids[pos]), err)
		}
		pos++
	}
	b.ReportMetric(float64(len(ids)), "doc-tokens")
}

// BenchmarkVocabBuild is the one-off cost per model of the token trie.
func BenchmarkVocabBuild(b *testing.B) {
	tok := benchTokenizer(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		NewVocab(tok, benchVocab)
	}
}

// BenchmarkJSONSchemaDecode05B decodes with and without the constraint,
// interleaved, on the q4 0.5B bench model (random weights, Qwen2.5 shape)
// with the Qwen tokenizer: overhead-% is the time spent in the grammar per
// token over the plain decode step (the target is at most 15);
// wall-overhead-% compares the two decodes' wall clocks, which the
// machine's load can swamp.
func BenchmarkJSONSchemaDecode05B(b *testing.B) {
	dir := benchModel05B(b)
	e, err := engine.Load(dir, engine.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	g, err := Compile([]byte(benchSchema), VocabOf(e))
	if err != nil {
		b.Fatal(err)
	}
	ids := e.RawPrompt("Summarise the meeting as JSON:")
	const tokens = 24
	var plain, constrained, inGrammar time.Duration
	var nPlain, nConstrained int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		seed := uint64(i)
		opt := engine.Options{Sampling: engine.Sampling{Temperature: 0.8, Seed: &seed}, MaxTokens: tokens}
		for _, withGrammar := range []bool{i%2 == 0, i%2 != 0} {
			opt.Constraint = nil
			var timed *timedConstraint
			if withGrammar {
				timed = &timedConstraint{State: g.Start()}
				opt.Constraint = timed
			}
			e.ResetCache()
			res, err := e.Generate(context.Background(), ids, opt, nil)
			if err != nil {
				b.Fatal(err)
			}
			// Decode time only: the prompt's prefill is the same for both.
			if withGrammar {
				inGrammar += timed.spent
				constrained += res.Stats.DecodeTime
				nConstrained += res.Stats.GeneratedTokens - 1
			} else {
				plain += res.Stats.DecodeTime
				nPlain += res.Stats.GeneratedTokens - 1
			}
		}
	}
	b.StopTimer()
	if nPlain > 0 && nConstrained > 0 {
		p := float64(plain.Milliseconds()) / float64(nPlain)
		c := float64(constrained.Milliseconds()) / float64(nConstrained)
		gm := float64(inGrammar.Microseconds()) / 1000 / float64(nConstrained)
		b.ReportMetric(p, "plain-ms/token")
		b.ReportMetric(c, "json-ms/token")
		// The wall-clock difference is at the mercy of the machine's load;
		// the time measured inside the constraint is not.
		b.ReportMetric(100*(c-p)/p, "wall-overhead-%")
		b.ReportMetric(gm, "grammar-ms/token")
		b.ReportMetric(100*gm/p, "overhead-%")
	}
}

// timedConstraint sums the time spent in the grammar.
type timedConstraint struct {
	*State
	spent time.Duration
}

func (c *timedConstraint) Mask(logits []float32, budget int) error {
	start := time.Now()
	defer func() { c.spent += time.Since(start) }()
	return c.State.Mask(logits, budget)
}

func (c *timedConstraint) Advance(tok int) error {
	start := time.Now()
	defer func() { c.spent += time.Since(start) }()
	return c.State.Advance(tok)
}

// benchModel05B writes the 0.5B bench model (as models/llm's benchmarks
// do; HARK_BENCH_05B_DIR reuses theirs) beside a copy of the Qwen3
// tokenizer, in a temporary directory.
func benchModel05B(b *testing.B) string {
	tokDir := mlxtest.Assets(b, "tokenizers", "qwen3")
	src := os.Getenv("HARK_BENCH_05B_DIR")
	if src == "" {
		src = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(src, "config.json")); err != nil {
		shape := llmtest.Shape{Hidden: 896, Layers: 24, Heads: 14, KVHeads: 2, HeadDim: 64, Intermediate: 4864, Vocab: benchVocab}
		if err := llmtest.Llama(shape, "qwen2", true).Write(src, 1, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "tokenizer") {
			continue
		}
		if err := os.Symlink(filepath.Join(src, en.Name()), filepath.Join(dir, en.Name())); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		data, err := os.ReadFile(filepath.Join(tokDir, name))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkConstrainedStepTight is BenchmarkConstrainedStep with a token
// budget that is always nearly spent, so every step checks each token
// against the budget (the full walk, uncached): the cost near the end of a
// reply with max tokens set.
func BenchmarkConstrainedStepTight(b *testing.B) {
	tok := benchTokenizer(b)
	v := NewVocab(tok, benchVocab)
	g, err := Compile([]byte(benchSchema), v)
	if err != nil {
		b.Fatal(err)
	}
	ids := tok.Encode(benchDoc, false)
	logits := make([]float32, benchVocab)
	b.ResetTimer()
	var s *State
	pos := len(ids)
	for i := 0; i < b.N; i++ {
		if pos == len(ids) {
			s, pos = g.Start(), 0
		}
		// The budget the rest of the document needs, in bytes, is always
		// enough (tokens are at least a byte) but never loose.
		budget := s.threads[0].dist() + 1
		if err := s.Mask(logits, budget); err != nil {
			b.Fatal(err)
		}
		if err := s.Advance(ids[pos]); err != nil {
			b.Fatalf("token %d (%q): %v", pos, tok.Token(ids[pos]), err)
		}
		pos++
	}
}
