package transcribe

import (
	"math"
	"slices"
	"sort"
	"strings"

	"hark/mlx"
	"hark/models/whisper"
)

// Word-level timestamps, as OpenAI's timing.py computes them: run the
// decoder over the window's text once more, take the cross-attention
// scores of the alignment heads (the heads whose attention follows the
// audio), normalise and median-filter them, and align tokens to 20 ms
// audio frames with dynamic time warping. Word boundaries fall where the
// alignment path moves to the next token.

const (
	tokensPerSecond     = 50 // encoder frames per second
	medianFilterWidth   = 7
	prependPunctuations = "\"'“¿([{-"
	appendPunctuations  = "\"'.。,，!！?？:：”)]}、"
)

type wordTiming struct {
	word        string
	tokens      []int
	start, end  float64
	probability float64
}

// alignmentHeads are the configured heads, or (as OpenAI defaults) every
// head of the second half of the decoder layers.
func (m *Model) alignmentHeads() [][2]int {
	cfg := m.Whisper.Config
	if len(cfg.AlignmentHeads) > 0 {
		return cfg.AlignmentHeads
	}
	var h [][2]int
	for l := cfg.TextLayer / 2; l < cfg.TextLayer; l++ {
		for k := 0; k < cfg.TextHead; k++ {
			h = append(h, [2]int{l, k})
		}
	}
	return h
}

// findAlignment times each word of textTokens within one window whose
// encoder output is audio and whose audio covers numFrames mel frames.
func (m *Model) findAlignment(audio *whisper.Cross, language, task string, textTokens []int, numFrames int) ([]wordTiming, error) {
	if len(textTokens) == 0 {
		return nil, nil
	}
	x, frames, probs, err := m.alignmentCost(audio, language, task, textTokens, numFrames)
	if err != nil {
		return nil, err
	}
	// Rows: <|notimestamps|> then the text tokens, as OpenAI's
	// matrix[len(sot_sequence):-1].
	textIdx, timeIdx := dtw(x, len(textTokens)+1, frames)
	return m.wordTimings(textTokens, language, textIdx, timeIdx, probs), nil
}

// alignmentCost is the DTW input OpenAI builds for a window: minus the
// head-averaged, median-filtered, standardised cross-attention of the
// alignment heads, rows <|notimestamps|> and the text tokens, columns the
// window's numFrames/2 audio frames; with each text token's probability.
func (m *Model) alignmentCost(audio *whisper.Cross, language, task string, textTokens []int, numFrames int) (x []float64, frames int, probs []float64, err error) {
	tok := m.Tokenizer
	sot, err := tok.SOTSequence(language, task)
	if err != nil {
		return nil, 0, nil, err
	}
	tokens := append(append(append(slices.Clone(sot), tok.NoTimestamps), textTokens...), tok.EOT)
	dec, err := m.Whisper.NewDecoderOver(audio, 1)
	if err != nil {
		return nil, 0, nil, err
	}
	defer dec.Close()
	h, scores, err := dec.ForwardWithCrossAttention([][]int{tokens})
	if err != nil {
		return nil, 0, nil, err
	}
	defer mlx.Free(scores...)
	// Probability of each text token given the ones before (the row before it).
	first := len(sot)
	rows := mlx.SliceAxis(h, 1, first, first+len(textTokens))
	logits := m.Whisper.Logits(rows)
	flat, v := logits.Float32s(), logits.Dim(2)
	mlx.Free(h, rows, logits)
	probs = make([]float64, len(textTokens))
	for i, t := range textTokens {
		row := flat[i*v : i*v+tok.EOT]
		probs[i] = math.Exp(float64(row[t]) - logSumExp(row))
	}

	n := len(tokens)
	frames = min(max(numFrames/2, 1), m.Whisper.Config.AudioCtx)
	heads := m.alignmentHeads()
	matrix := make([]float64, n*frames) // mean over heads of the normalised weights
	for _, hd := range heads {
		l, k := hd[0], hd[1]
		if l < 0 || l >= len(scores) || k < 0 || k >= scores[l].Dim(1) {
			continue
		}
		s := scores[l]
		ctx := s.Dim(3)
		all := s.Float32s()[k*n*ctx : (k+1)*n*ctx]
		w := make([]float64, n*frames)
		for i := 0; i < n; i++ {
			row := all[i*ctx : i*ctx+frames]
			lse := logSumExp(row)
			for j, x := range row {
				w[i*frames+j] = math.Exp(float64(x) - lse)
			}
		}
		// Standardise each frame across tokens, then smooth along time.
		for j := 0; j < frames; j++ {
			var mean, sq float64
			for i := 0; i < n; i++ {
				mean += w[i*frames+j]
			}
			mean /= float64(n)
			for i := 0; i < n; i++ {
				d := w[i*frames+j] - mean
				sq += d * d
			}
			std := math.Sqrt(sq / float64(n))
			for i := 0; i < n; i++ {
				w[i*frames+j] = (w[i*frames+j] - mean) / std
			}
		}
		for i := 0; i < n; i++ {
			medianFilter(w[i*frames:(i+1)*frames], medianFilterWidth)
		}
		for i, x := range w {
			matrix[i] += x / float64(len(heads))
		}
	}
	// Rows <|notimestamps|> and the text (drop the SOT sequence and EOT).
	text := matrix[first*frames : (n-1)*frames]
	x = make([]float64, len(text))
	for i, v := range text {
		x[i] = -v
	}
	return x, frames, probs, nil
}

// wordTimings groups the DTW path into words: a word starts where the
// path first reaches its first token's row and ends where it reaches the
// next word's.
func (m *Model) wordTimings(textTokens []int, language string, textIdx, timeIdx []int, probs []float64) []wordTiming {
	tok := m.Tokenizer
	words, wordTokens := m.splitToWordTokens(append(slices.Clone(textTokens), tok.EOT), language)
	if len(wordTokens) <= 1 {
		return nil
	}
	boundaries := []int{0}
	for _, wt := range wordTokens[:len(wordTokens)-1] {
		boundaries = append(boundaries, boundaries[len(boundaries)-1]+len(wt))
	}
	var jumpTimes []float64
	for p := range textIdx {
		if p == 0 || textIdx[p] != textIdx[p-1] {
			jumpTimes = append(jumpTimes, float64(timeIdx[p])/tokensPerSecond)
		}
	}
	var out []wordTiming
	for w := 0; w+1 < len(boundaries); w++ {
		a, b := boundaries[w], boundaries[w+1]
		if b >= len(jumpTimes) || a >= len(jumpTimes) {
			break
		}
		var p float64
		for _, x := range probs[a:min(b, len(probs))] {
			p += x
		}
		out = append(out, wordTiming{word: words[w], tokens: wordTokens[w], start: jumpTimes[a], end: jumpTimes[b],
			probability: p / float64(b-a)})
	}
	return out
}

// medianFilter replaces each value by the median of the width values
// around it, reflecting at the edges (OpenAI's median_filter along time).
func medianFilter(x []float64, width int) {
	pad := width / 2
	if len(x) <= pad {
		return
	}
	ext := make([]float64, len(x)+2*pad)
	for i := range ext {
		j := i - pad
		if j < 0 {
			j = -j
		} else if j >= len(x) {
			j = 2*(len(x)-1) - j
		}
		ext[i] = x[j]
	}
	win := make([]float64, width)
	for i := range x {
		copy(win, ext[i:i+width])
		sort.Float64s(win)
		x[i] = win[pad]
	}
}

// dtw aligns the rows (tokens) of cost x [n, m] to its columns (frames)
// with a monotone path from (0,0) to (n-1,m-1) of least total cost, and
// returns the path as parallel token and frame indices. Ties prefer the
// move along time, as OpenAI's dtw_cpu.
func dtw(x []float64, n, m int) (rows, cols []int) {
	inf := math.Inf(1)
	cost := make([]float64, (n+1)*(m+1))
	trace := make([]int8, (n+1)*(m+1))
	for i := range cost {
		cost[i] = inf
	}
	cost[0] = 0
	at := func(i, j int) int { return i*(m+1) + j }
	for j := 1; j <= m; j++ {
		for i := 1; i <= n; i++ {
			c0, c1, c2 := cost[at(i-1, j-1)], cost[at(i-1, j)], cost[at(i, j-1)]
			var c float64
			var t int8
			switch {
			case c0 < c1 && c0 < c2:
				c, t = c0, 0
			case c1 < c0 && c1 < c2:
				c, t = c1, 1
			default:
				c, t = c2, 2
			}
			// OpenAI's cost matrix is float32: each sum (float64 input
			// plus float32 cost) is rounded as it is stored, which decides
			// ties.
			cost[at(i, j)] = float64(float32(x[(i-1)*m+j-1] + c))
			trace[at(i, j)] = t
		}
	}
	for j := 0; j <= m; j++ {
		trace[at(0, j)] = 2
	}
	for i := 0; i <= n; i++ {
		trace[at(i, 0)] = 1
	}
	i, j := n, m
	for i > 0 || j > 0 {
		rows = append(rows, i-1)
		cols = append(cols, j-1)
		switch trace[at(i, j)] {
		case 0:
			i, j = i-1, j-1
		case 1:
			i--
		default:
			j--
		}
	}
	slices.Reverse(rows)
	slices.Reverse(cols)
	return rows, cols
}

// splitToWordTokens groups tokens into words: at spaces and punctuation,
// or at every complete character for languages written without spaces.
func (m *Model) splitToWordTokens(tokens []int, language string) ([]string, [][]int) {
	words, groups := m.splitOnUnicode(tokens)
	switch language {
	case "zh", "ja", "th", "lo", "my", "yue":
		return words, groups
	}
	var outW []string
	var outT [][]int
	for i, w := range words {
		special := groups[i][0] >= m.Tokenizer.EOT
		trimmed := strings.TrimSpace(w)
		// Python's `in string.punctuation`: a substring test ("" counts).
		punct := strings.Contains("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", trimmed)
		if special || strings.HasPrefix(w, " ") || punct || len(outW) == 0 {
			outW = append(outW, w)
			outT = append(outT, slices.Clone(groups[i]))
			continue
		}
		outW[len(outW)-1] += w
		outT[len(outT)-1] = append(outT[len(outT)-1], groups[i]...)
	}
	return outW, outT
}

// splitOnUnicode cuts tokens where the decoded text so far ends on a whole
// character (a token may hold part of a multi-byte character).
func (m *Model) splitOnUnicode(tokens []int) ([]string, [][]int) {
	tok := m.Tokenizer
	full := []rune(tok.DecodeWithTimestamps(tokens))
	var words []string
	var groups [][]int
	var cur []int
	offset := 0
	for _, t := range tokens {
		cur = append(cur, t)
		dec := []rune(tok.DecodeWithTimestamps(cur))
		at := slices.Index(dec, '\uFFFD')
		if at < 0 || (offset+at < len(full) && full[offset+at] == '\uFFFD') {
			words = append(words, string(dec))
			groups = append(groups, cur)
			cur = nil
			offset += len(dec)
		}
	}
	return words, groups
}

// mergePunctuations attaches opening punctuation to the following word and
// closing punctuation to the previous one.
func mergePunctuations(al []wordTiming) {
	for i, j := len(al)-2, len(al)-1; i >= 0; i-- {
		prev, next := &al[i], &al[j]
		if strings.HasPrefix(prev.word, " ") && strings.Contains(prependPunctuations, strings.TrimSpace(prev.word)) {
			next.word = prev.word + next.word
			next.tokens = append(slices.Clone(prev.tokens), next.tokens...)
			prev.word, prev.tokens = "", nil
		} else {
			j = i
		}
	}
	for i, j := 0, 1; j < len(al); j++ {
		prev, next := &al[i], &al[j]
		// As in OpenAI's code an empty word counts as punctuation (Python's
		// "" in s), so i stays on the last real word.
		if !strings.HasSuffix(prev.word, " ") && strings.Contains(appendPunctuations, next.word) {
			prev.word += next.word
			prev.tokens = append(prev.tokens, next.tokens...)
			next.word, next.tokens = "", nil
		} else {
			i = j
		}
	}
}

// addWordTimestamps fills the Words of one window's segments and adjusts
// their start and end to the words, with OpenAI's heuristics against
// implausibly long first and last words. It returns the updated
// lastSpeech (the end of the last word so far).
func (m *Model) addWordTimestamps(segs []Segment, audio *whisper.Cross, language, task string, numFrames int, lastSpeech float64) (float64, error) {
	if len(segs) == 0 {
		return lastSpeech, nil
	}
	eot := m.Tokenizer.EOT
	perSeg := make([][]int, len(segs))
	var text []int
	for i, s := range segs {
		for _, t := range s.Tokens {
			if t < eot {
				perSeg[i] = append(perSeg[i], t)
			}
		}
		text = append(text, perSeg[i]...)
	}
	al, err := m.findAlignment(audio, language, task, text, numFrames)
	if err != nil {
		return lastSpeech, err
	}
	var durations []float64
	for _, w := range al {
		if d := w.end - w.start; d != 0 {
			durations = append(durations, d)
		}
	}
	median := 0.0
	if len(durations) > 0 {
		sorted := slices.Clone(durations)
		sort.Float64s(sorted)
		if k := len(sorted); k%2 == 1 {
			median = sorted[k/2]
		} else {
			median = (sorted[k/2-1] + sorted[k/2]) / 2
		}
	}
	median = min(0.7, median)
	maxDur := median * 2
	if len(durations) > 0 {
		// Truncate long words at sentence boundaries.
		const ends = ".。!！?？"
		for i := 1; i < len(al); i++ {
			if al[i].end-al[i].start > maxDur {
				if al[i].word != "" && strings.Contains(ends, al[i].word) {
					al[i].end = al[i].start + maxDur
				} else if al[i-1].word != "" && strings.Contains(ends, al[i-1].word) {
					al[i].start = al[i].end - maxDur
				}
			}
		}
	}
	mergePunctuations(al)
	offset := float64(segs[0].Seek*160) / 16000
	wi := 0
	for si := range segs {
		seg := &segs[si]
		saved := 0
		var words []Word
		for wi < len(al) && saved < len(perSeg[si]) {
			t := al[wi]
			if t.word != "" {
				words = append(words, Word{Word: t.word, StartSec: round2(offset + t.start), EndSec: round2(offset + t.end), Probability: t.probability})
			}
			saved += len(t.tokens)
			wi++
		}
		if len(words) > 0 {
			first := &words[0]
			// The first word after a pause should not be longer than the median allows.
			if first.EndSec-lastSpeech > median*4 && (first.EndSec-first.StartSec > maxDur || (len(words) > 1 && words[1].EndSec-first.StartSec > maxDur*2)) {
				if len(words) > 1 && words[1].EndSec-words[1].StartSec > maxDur {
					b := max(words[1].EndSec/2, words[1].EndSec-maxDur)
					first.EndSec, words[1].StartSec = b, b
				}
				first.StartSec = max(0, first.EndSec-maxDur)
			}
			// Prefer the segment's own start if the first word is too long.
			if seg.StartSec < first.EndSec && seg.StartSec-0.5 > first.StartSec {
				first.StartSec = max(0, min(first.EndSec-median, seg.StartSec))
			} else {
				seg.StartSec = first.StartSec
			}
			last := &words[len(words)-1]
			if seg.EndSec > last.StartSec && seg.EndSec+0.5 < last.EndSec {
				last.EndSec = max(last.StartSec+median, seg.EndSec)
			} else {
				seg.EndSec = last.EndSec
			}
			lastSpeech = seg.EndSec
			seg.Start, seg.End = seconds(seg.StartSec), seconds(seg.EndSec)
		}
		for i := range words {
			words[i].Start, words[i].End = seconds(words[i].StartSec), seconds(words[i].EndSec)
		}
		seg.Words = words
	}
	return lastSpeech, nil
}

// round2 rounds to hundredths like Python's round(x, 2) (ties to even).
func round2(x float64) float64 { return math.RoundToEven(x*100) / 100 }

// lastWordEnd is the end of the last word of segs, or the last segment's
// end when no segment has words.
func lastWordEnd(segs []Segment) (float64, bool) {
	for i := len(segs) - 1; i >= 0; i-- {
		if w := segs[i].Words; len(w) > 0 {
			return w[len(w)-1].EndSec, true
		}
	}
	if len(segs) == 0 {
		return 0, false
	}
	return segs[len(segs)-1].EndSec, true
}
