package transcribe

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"time"

	"hark/mlx"
	"hark/models/whisper"
)

// decodeOptions are one window's decoding settings (OpenAI's
// DecodingOptions).
type decodeOptions struct {
	language, task      string
	temperature         float64
	sampleLen           int
	bestOf, beamSize    int
	patience            float64
	lengthPenalty       float64
	prompt              []int
	suppressTokens      []int // already expanded (no -1)
	suppressBlank       bool
	withoutTimestamps   bool
	maxInitialTimestamp float64
	rng                 *rand.Rand
	stats               *Stats // receives the decoder and logit times (may be nil)
}

// decodeResult is one window's outcome (OpenAI's DecodingResult).
type decodeResult struct {
	tokens           []int // sampled tokens before the first end-of-text
	text             string
	avgLogprob       float64
	sumLogprob       float64
	noSpeechProb     float64
	temperature      float64
	compressionRatio float64
	initialTokens    []int
}

// suppressSet is OpenAI's _get_suppress_tokens: the requested ids (-1 =
// non-speech symbols) plus the special tokens that must never be sampled.
func suppressSet(tok *whisper.Tokenizer, requested []int) []int {
	if requested == nil {
		requested = []int{-1}
	}
	set := map[int]bool{}
	for _, id := range requested {
		if id == -1 {
			for _, ns := range tok.NonSpeechTokens() {
				set[ns] = true
			}
		} else if id >= 0 {
			set[id] = true
		}
	}
	for _, id := range []int{tok.Transcribe, tok.Translate, tok.SOT, tok.SOTPrev, tok.SOTLM, tok.NoSpeech} {
		set[id] = true
	}
	out := make([]int, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// decodeWindow decodes one 30 s window from the cross-attention keys and
// values of its encoder output (computed once per window).
func (m *Model) decodeWindow(ctx context.Context, audio *whisper.Cross, o decodeOptions) (*decodeResult, error) {
	cfg := m.Whisper.Config
	initial, err := m.initialTokens(o)
	if err != nil {
		return nil, err
	}
	tok := m.Tokenizer
	sampleBegin := len(initial)
	sotIndex := slices.Index(initial, tok.SOT)
	sampleLen := o.sampleLen
	if sampleLen <= 0 {
		sampleLen = cfg.TextCtx / 2
	}
	filters := m.logitFilters(o, sampleBegin)

	group := 1
	var beam *beamSearch
	switch {
	case o.beamSize > 0 && o.temperature == 0:
		group = o.beamSize
		beam = newBeamSearch(o.beamSize, o.patience, tok.EOT)
	case o.temperature > 0 && o.bestOf > 1:
		group = o.bestOf
	}
	dec, err := m.Whisper.NewDecoderOver(audio, group)
	if err != nil {
		return nil, err
	}
	defer dec.Close()

	tokens := make([][]int, group)
	for i := range tokens {
		tokens[i] = slices.Clone(initial)
	}
	sums := make([]float32, group)
	noSpeech := math.NaN()
	feed := tokens
	var host []float32 // the logits' host copy, reused every step
	for step := 0; step < sampleLen; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		logits, ns, err := m.stepLogits(dec, feed, step == 0, sotIndex, &host)
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		if step == 0 {
			noSpeech = ns
		}
		for _, f := range filters {
			f.apply(logits, tokens)
		}
		var done bool
		if beam != nil {
			var src []int
			tokens, src, done = beam.update(tokens, logits, sums)
			if err := dec.Reorder(src); err != nil {
				return nil, err
			}
		} else {
			tokens, done = sampleUpdate(tokens, logits, sums, o.temperature, tok.EOT, o.rng)
		}
		if o.stats != nil {
			o.stats.Decoder += t1.Sub(t0)
			o.stats.Tokens += len(feed) * len(feed[0])
			since(&o.stats.Logic, t1)
		}
		if done || len(tokens[0]) > cfg.TextCtx {
			break
		}
		feed = make([][]int, len(tokens))
		for i, t := range tokens {
			feed[i] = t[len(t)-1:]
		}
	}

	// Candidates: every row (sampling) or the finished beams.
	var cands [][]int
	var candSums []float64
	if beam != nil {
		cands, candSums = beam.finalize(tokens, sums)
	} else {
		for i, t := range tokens {
			cands = append(cands, append(slices.Clone(t), tok.EOT))
			candSums = append(candSums, float64(sums[i]))
		}
	}
	best, bestScore := -1, math.Inf(-1)
	for i, c := range cands {
		c = c[sampleBegin:]
		if e := slices.Index(c, tok.EOT); e >= 0 {
			c = c[:e]
		}
		cands[i] = c
		n := float64(len(c))
		penalty := n
		if o.lengthPenalty != 0 {
			penalty = math.Pow((5+n)/6, o.lengthPenalty)
		}
		if s := candSums[i] / penalty; best < 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	out := cands[best]
	text := strings.TrimSpace(tok.Decode(out))
	return &decodeResult{
		tokens:           out,
		text:             text,
		sumLogprob:       candSums[best],
		avgLogprob:       candSums[best] / float64(len(out)+1),
		noSpeechProb:     noSpeech,
		temperature:      o.temperature,
		compressionRatio: compressionRatio(text),
		initialTokens:    initial,
	}, nil
}

// initialTokens is the decoder input of a window: [<|startofprev|> prompt]
// <|startoftranscript|> [<|lang|> <|task|>] [<|notimestamps|>], with the
// prompt cut to its last n_text_ctx/2-1 tokens.
func (m *Model) initialTokens(o decodeOptions) ([]int, error) {
	tok := m.Tokenizer
	initial, err := tok.SOTSequence(o.language, o.task)
	if err != nil {
		return nil, err
	}
	if o.withoutTimestamps {
		initial = append(initial, tok.NoTimestamps)
	}
	if len(o.prompt) > 0 {
		keep := o.prompt[max(0, len(o.prompt)-(m.Whisper.Config.TextCtx/2-1)):]
		initial = append(append([]int{tok.SOTPrev}, keep...), initial...)
	}
	return initial, nil
}

// logitFilters are applied to every step's logits, in OpenAI's order.
func (m *Model) logitFilters(o decodeOptions, sampleBegin int) []logitFilter {
	tok := m.Tokenizer
	var filters []logitFilter
	if o.suppressBlank {
		blank := append(tok.Encode(" "), tok.EOT)
		filters = append(filters, suppressBlank{ids: blank, sampleBegin: sampleBegin})
	}
	if len(o.suppressTokens) > 0 {
		filters = append(filters, suppressTokens(o.suppressTokens))
	}
	if !o.withoutTimestamps {
		maxInit := -1
		if o.maxInitialTimestamp > 0 {
			precision := 30.0 / float64(m.Whisper.Config.AudioCtx) // seconds per timestamp step
			maxInit = int(math.RoundToEven(o.maxInitialTimestamp / precision))
		}
		filters = append(filters, timestampRules{tok: tok, sampleBegin: sampleBegin, maxInitial: maxInit})
	}
	return filters
}

// stepLogits runs the decoder on feed and returns the last position's
// logits per row, and on the first step the no-speech probability read at
// the <|startoftranscript|> position.
//
// The rows live in *host, which the next call overwrites: a window's
// logits were otherwise a new vocabulary-sized slice per token (207 KB for
// the multilingual vocabulary), most of the decoder's garbage.
func (m *Model) stepLogits(dec *whisper.Decoder, feed [][]int, first bool, sotIndex int, host *[]float32) ([][]float32, float64, error) {
	// No mlx scope here: Forward hands its grown KV cache to the enclosing
	// scope, which must outlive the decoder, so temporaries are freed by hand.
	h, err := dec.Forward(feed)
	if err != nil {
		return nil, 0, err
	}
	defer h.Free()
	n := h.Dim(1)
	last := mlx.SliceAxis(h, 1, n-1, n)
	l := m.Whisper.Logits(last)
	flat := l.Float32sInto(*host)
	*host = flat
	v := l.Dim(2)
	mlx.Free(last, l)
	rows := make([][]float32, h.Dim(0))
	for i := range rows {
		rows[i] = flat[i*v : (i+1)*v : (i+1)*v]
	}
	ns := math.NaN()
	if first && sotIndex >= 0 {
		at := mlx.Slice(h, []int{0, sotIndex}, []int{1, sotIndex + 1}, nil)
		sl := m.Whisper.Logits(at)
		row := sl.Float32s()
		mlx.Free(at, sl)
		ns = math.Exp(float64(row[m.Tokenizer.NoSpeech]) - logSumExp(row))
	}
	return rows, ns, nil
}

// sampleUpdate is OpenAI's GreedyDecoder.update: argmax at temperature 0,
// otherwise a draw from softmax(logits/T). Rows that already ended keep
// emitting end-of-text without adding to their log-probability.
func sampleUpdate(tokens [][]int, logits [][]float32, sums []float32, temp float64, eot int, rng *rand.Rand) ([][]int, bool) {
	done := true
	for i, row := range logits {
		var next int
		if temp == 0 {
			next = argmax(row)
		} else {
			next = sample(row, temp, rng)
		}
		seq := tokens[i]
		if seq[len(seq)-1] == eot {
			next = eot
		} else {
			sums[i] += float32(float64(row[next]) - logSumExp(row))
		}
		tokens[i] = append(seq, next)
		if next != eot {
			done = false
		}
	}
	return tokens, done
}

// argmax returns the first index of the largest value.
func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

func sample(row []float32, temp float64, rng *rand.Rand) int {
	m := math.Inf(-1)
	for _, v := range row {
		m = math.Max(m, float64(v))
	}
	p := make([]float64, len(row))
	var total float64
	for i, v := range row {
		p[i] = math.Exp((float64(v) - m) / temp)
		total += p[i]
	}
	r := rng.Float64() * total
	for i, w := range p {
		if r < w {
			return i
		}
		r -= w
	}
	return argmax(row)
}

func (o decodeOptions) String() string {
	return fmt.Sprintf("temperature %.1f beam %d best_of %d", o.temperature, o.beamSize, o.bestOf)
}
