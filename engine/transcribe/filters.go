package transcribe

import (
	"math"

	"hark/models/whisper"
)

var negInf = float32(math.Inf(-1))

// A logitFilter edits one step's logits in place, like OpenAI's LogitFilter:
// logits is one row per sequence, tokens the full sequences so far
// (prompt included).
type logitFilter interface {
	apply(logits [][]float32, tokens [][]int)
}

// suppressBlank forbids a blank (" ") or end-of-text as the first sampled
// token, so a window never starts by giving up.
type suppressBlank struct {
	ids         []int
	sampleBegin int
}

func (f suppressBlank) apply(logits [][]float32, tokens [][]int) {
	if len(tokens[0]) != f.sampleBegin {
		return
	}
	for _, row := range logits {
		for _, id := range f.ids {
			row[id] = negInf
		}
	}
}

// suppressTokens forbids a fixed set of ids at every step.
type suppressTokens []int

func (f suppressTokens) apply(logits [][]float32, _ [][]int) {
	for _, row := range logits {
		for _, id := range f {
			if id >= 0 && id < len(row) {
				row[id] = negInf
			}
		}
	}
}

// timestampRules enforces Whisper's timestamp grammar (OpenAI's
// ApplyTimestampRules): timestamps come in pairs except right before
// end-of-text, never decrease, the first token is a timestamp no later than
// maxInitial, and when timestamps together are more likely than any single
// text token a timestamp must be sampled.
type timestampRules struct {
	tok         *whisper.Tokenizer
	sampleBegin int
	maxInitial  int // index of the latest allowed first timestamp; <0 = no limit
}

func (f timestampRules) apply(logits [][]float32, tokens [][]int) {
	tb, eot := f.tok.TimestampBegin, f.tok.EOT
	for k, row := range logits {
		// <|notimestamps|> is what without_timestamps is for.
		row[f.tok.NoTimestamps] = negInf
		seq := tokens[k][f.sampleBegin:]
		last := len(seq) >= 1 && seq[len(seq)-1] >= tb
		penult := len(seq) < 2 || seq[len(seq)-2] >= tb
		if last {
			if penult { // a closed pair: text must follow
				fill(row[tb:], negInf)
			} else { // an open segment: close it or end
				fill(row[:eot], negInf)
			}
		}
		lastTS := -1
		for _, t := range seq {
			if t >= tb {
				lastTS = t
			}
		}
		if lastTS >= 0 {
			// Timestamps never go back; a new segment cannot be empty.
			upto := lastTS + 1
			if last && !penult {
				upto = lastTS
			}
			fill(row[tb:min(upto, len(row))], negInf)
		}
		if len(tokens[k]) == f.sampleBegin {
			fill(row[:tb], negInf)
			if f.maxInitial >= 0 {
				if first := tb + f.maxInitial + 1; first < len(row) {
					fill(row[first:], negInf)
				}
			}
		}
		// If the timestamps' total probability beats every text token, the
		// next token must be a timestamp. OpenAI compares log-softmax
		// values; both sides carry the same -logsumexp(row), so the
		// comparison is made without it (a pass over the whole vocabulary
		// fewer per step).
		maxText := negInf
		for _, v := range row[:tb] {
			if v > maxText {
				maxText = v
			}
		}
		if logSumExp(row[tb:]) > float64(maxText) {
			fill(row[:tb], negInf)
		}
	}
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// logSumExp of a row in float64; -Inf when every entry is -Inf.
func logSumExp(row []float32) float64 {
	mf := negInf
	for _, v := range row {
		if v > mf {
			mf = v
		}
	}
	m := float64(mf)
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, v := range row {
		if v != negInf {
			s += math.Exp(float64(v) - m)
		}
	}
	return m + math.Log(s)
}

// logSoftmax returns log_softmax(row) as float64.
func logSoftmax(row []float32) []float64 {
	lse := logSumExp(row)
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = float64(v) - lse
	}
	return out
}
