package transcribe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"time"

	"hark/engine/mel"
	"hark/mlx"
	"hark/models/whisper"
)

// Whisper's fixed framing: 30 s windows of 3000 mel frames (10 ms each);
// the encoder halves the frame rate, so one timestamp step is 20 ms.
const (
	windowFrames = mel.NFrames
	hopSeconds   = float64(mel.HopLength) / mel.SampleRate
)

// ErrNoAudio is returned for empty input.
var ErrNoAudio = errors.New("no audio samples")

// Transcribe transcribes 16 kHz mono samples. Segments are passed to
// onSegment (when not nil) as soon as their window is decoded, and are all
// in the Result too. When decoding stops early (an error, or ctx being
// cancelled) the segments so far are returned with the error.
func (m *Model) Transcribe(ctx context.Context, samples []float32, opt Options, onSegment func(Segment)) (*Result, error) {
	if len(samples) == 0 {
		return nil, ErrNoAudio
	}
	if opt.VAD != nil {
		return m.transcribeSpeech(ctx, samples, opt, onSegment)
	}
	st := &Stats{}
	t0 := time.Now()
	spec, err := mel.LogMelPadded(samples, m.Whisper.Config.NMels)
	if err != nil {
		return nil, fmt.Errorf("mel: %w", err)
	}
	since(&st.Mel, t0)
	return m.transcribe(ctx, wholeMel{spec}, int64(len(samples)), opt, onSegment, st)
}

// transcribe decodes the windows of frames, the padded spectrogram of
// samples samples of audio.
func (m *Model) transcribe(ctx context.Context, frames frameSource, samples int64, opt Options, onSegment func(Segment), st *Stats) (*Result, error) {
	// transcribe()'s content_frames: the padded mel minus its 3000 frames
	// of padding.
	contentFrames := int(samples / mel.HopLength)
	res := &Result{Duration: seconds(float64(samples) / mel.SampleRate), Stats: st}
	r := &run{m: m, frames: frames, opt: opt, onSegment: onSegment, contentFrames: contentFrames, res: res}
	if opt.Resume != nil && opt.Resume.Language != "" {
		r.opt.Language = opt.Resume.Language // as detected before the interruption
	}
	if err := r.chooseLanguage(ctx); err != nil {
		return nil, err
	}
	if err := r.loop(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// run is the state of one transcription.
type run struct {
	m             *Model
	frames        frameSource
	opt           Options
	onSegment     func(Segment)
	contentFrames int
	res           *Result
	language      string
	suppress      []int
	rng           *rand.Rand
	lastSpeech    float64 // end of the last timed word (word timestamps)
	window        int     // windows decoded so far, for Retry

	// encoded first window from language detection, reused when window 0
	// has the same mel (audio of 30 s or more)
	langAudio *whisper.Cross
}

// encodeWindow runs the encoder on frames [seek, seek+size) zero-padded to
// a full window, and projects its output onto the decoder's
// cross-attention keys and values once for every decoder over the window.
func (r *run) encodeWindow(seek, size int) (*whisper.Cross, error) {
	seg, err := r.frames.window(seek, size)
	if err != nil {
		return nil, err
	}
	defer since(&r.res.Stats.Encoder, time.Now())
	r.res.Stats.Windows++
	x := mlx.FromSlice(seg.Data, seg.NMels, seg.NFrames)
	defer x.Free()
	feats, err := r.m.Whisper.Encode(x)
	if err != nil {
		return nil, err
	}
	defer feats.Free()
	// Before the cross-attention projections as well as after: they are
	// 12 new [1500, d] arrays (37 MB for whisper-base), which on top of
	// the encoder's pooled buffers made the peak of a long recording; and
	// their pooled temporaries, still held at one collection after, would
	// set the decoder's heap goal about 80 MB higher.
	releaseEncoderBuffers()
	cross, err := r.m.Whisper.CrossAttention(feats)
	releaseEncoderBuffers()
	return cross, err
}

// releaseEncoderBuffers hands the encoder's freed activations back before
// the decoder runs. The CPU backend keeps buffers of a MB or more on free
// lists for reuse (mlx.ReleaseScratch lets go of them; whisper-base's
// encoder leaves about 80 MB there) and smaller ones in sync.Pools, which
// keep them until the second collection after. Either way they are live to
// the collector, and the decoder's heap goal is twice what is live: kept,
// they cost twice their size in RSS for the whole window. Two collections
// empty the pools; the heap is nearly all pointer-free slices, so they cost
// little marking.
func releaseEncoderBuffers() {
	mlx.ReleaseScratch()
	runtime.GC()
	runtime.GC()
}

func (r *run) chooseLanguage(ctx context.Context) error {
	tok := r.m.Tokenizer
	if !tok.Multilingual {
		if r.opt.Language != "" && r.opt.Language != "en" {
			return fmt.Errorf("this model is English-only; language %q is not available", r.opt.Language)
		}
		r.language = "en"
		r.res.Language = "en"
		return nil
	}
	if r.opt.Language != "" {
		code, ok := whisper.LookupLanguage(r.opt.Language)
		if !ok {
			return fmt.Errorf("unknown language %q", r.opt.Language)
		}
		if _, err := tok.LanguageToken(code); err != nil {
			return err
		}
		r.language = code
		r.res.Language = code
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// OpenAI detects on the first 3000 frames of the padded mel: for short
	// audio that includes the log-mel floor of the padding, unlike the
	// zero-padded windows decoded afterwards.
	a, err := r.encodeWindow(0, windowFrames)
	if err != nil {
		return err
	}
	t0 := time.Now()
	best, probs, err := r.m.detectLanguage(a)
	since(&r.res.Stats.Language, t0)
	if err != nil {
		a.Close()
		return err
	}
	if r.contentFrames >= windowFrames {
		r.langAudio = a
	} else {
		a.Close()
	}
	r.language, r.res.Language, r.res.LanguageProbs = best, best, probs
	return nil
}

func (r *run) loop(ctx context.Context) error {
	defer func() {
		if r.langAudio != nil {
			r.langAudio.Close()
		}
	}()
	opt := r.opt
	tok := r.m.Tokenizer
	cfg := r.m.Whisper.Config
	r.suppress = suppressSet(tok, opt.SuppressTokens)
	r.rng = rand.New(rand.NewSource(opt.Seed))
	inputStride := windowFrames / cfg.AudioCtx // mel frames per timestamp step
	timePrecision := float64(inputStride) * hopSeconds

	var allTokens, initialPrompt []int
	promptResetSince := 0
	remainingPrompt := cfg.TextCtx/2 - 1
	if p := strings.TrimSpace(opt.InitialPrompt); opt.InitialPrompt != "" {
		initialPrompt = tok.Encode(" " + p)
		allTokens = append(allTokens, initialPrompt...)
		remainingPrompt -= len(initialPrompt)
	}
	total := seconds(float64(r.contentFrames) * hopSeconds)

	// The text is built from the kept tokens even when the loop stops early.
	defer func() { r.res.Text = tok.Decode(allTokens[len(initialPrompt):]) }()
	seek := 0
	if cp := opt.Resume; cp != nil {
		r.res.Segments = restoreSegments(cp.Segments)
		for _, s := range r.res.Segments {
			allTokens = append(allTokens, s.Tokens...)
		}
		seek, promptResetSince, r.lastSpeech, r.window = cp.Seek, min(cp.PromptResetSince, len(allTokens)), cp.LastSpeech, cp.Windows
	}
	for seek < r.contentFrames {
		if err := ctx.Err(); err != nil {
			return err
		}
		timeOffset := float64(seek*mel.HopLength) / mel.SampleRate
		segmentSize := min(windowFrames, r.contentFrames-seek)
		segmentDuration := float64(segmentSize*mel.HopLength) / mel.SampleRate

		prompt := windowPrompt(allTokens, initialPrompt, promptResetSince, remainingPrompt, opt.CarryInitialPrompt)

		var audio *whisper.Cross
		var err error
		if seek == 0 && segmentSize == windowFrames && r.langAudio != nil {
			audio, r.langAudio = r.langAudio, nil
		} else if audio, err = r.encodeWindow(seek, segmentSize); err != nil {
			return err
		}
		r.window++
		from := seconds(float64(seek) * hopSeconds)
		to := seconds(float64(seek+segmentSize) * hopSeconds)
		result, err := r.decodeWithFallback(ctx, audio, prompt, from, to)
		if err != nil {
			audio.Close()
			return err
		}

		if !isNaN(opt.NoSpeechThreshold) {
			skip := result.noSpeechProb > opt.NoSpeechThreshold
			if !isNaN(opt.LogProbThreshold) && result.avgLogprob > opt.LogProbThreshold {
				skip = false // confident text despite the no-speech score
			}
			if skip {
				audio.Close()
				seek += segmentSize
				r.progress(seek, total)
				r.checkpoint(seek, promptResetSince, len(r.res.Segments))
				continue
			}
		}

		windowSeek := seek
		segs, next, lone := r.splitSegments(result, seek, timeOffset, segmentSize, segmentDuration, timePrecision, inputStride)
		seek = next
		if opt.WordTimestamps {
			t0 := time.Now()
			r.lastSpeech, err = r.m.addWordTimestamps(segs, audio, r.language, opt.Task, segmentSize, r.lastSpeech)
			since(&r.res.Stats.Words, t0)
			if err != nil {
				audio.Close()
				return fmt.Errorf("word timestamps: %w", err)
			}
			if end, ok := lastWordEnd(segs); ok {
				// Resume after the last word rather than the last timestamp.
				// (never backwards: that could loop forever)
				if ws := int(math.RoundToEven(end * 100)); !lone && end > timeOffset && ws > windowSeek {
					seek = ws
				}
				r.lastSpeech = end
			}
		}
		audio.Close()

		// An instantaneous or empty segment carries no text.
		for i := range segs {
			if segs[i].StartSec == segs[i].EndSec || strings.TrimSpace(segs[i].Text) == "" {
				segs[i].Text = ""
				segs[i].Tokens = []int{}
				segs[i].Words = nil
			}
		}
		first := len(r.res.Segments)
		for i := range segs {
			segs[i].ID = len(r.res.Segments)
			r.res.Segments = append(r.res.Segments, segs[i])
			allTokens = append(allTokens, segs[i].Tokens...)
			if r.onSegment != nil {
				r.onSegment(segs[i])
			}
		}
		if !opt.ConditionOnPreviousText || result.temperature > 0.5 {
			promptResetSince = len(allTokens)
		}
		r.progress(seek, total)
		r.checkpoint(seek, promptResetSince, first)
	}
	return nil
}

// windowPrompt is the previous text a window is conditioned on: the tokens
// since the last reset or, with carry, the initial prompt followed by the
// latest tokens after it that fit.
func windowPrompt(all, initial []int, resetSince, remaining int, carry bool) []int {
	if !carry {
		return all[resetSince:]
	}
	rest := all[min(max(len(initial), resetSince), len(all)):]
	if remaining > 0 && len(rest) > remaining {
		rest = rest[len(rest)-remaining:]
	}
	return append(slices.Clone(initial), rest...)
}

func (r *run) progress(seek int, total time.Duration) {
	if r.opt.Progress != nil {
		r.opt.Progress(seconds(float64(min(seek, r.contentFrames))*hopSeconds), total)
	}
}

// splitSegments cuts a window's tokens into segments at consecutive
// timestamp pairs and returns them with the next seek position.
func (r *run) splitSegments(res *decodeResult, seek int, timeOffset float64, segmentSize int, segmentDuration, precision float64, stride int) (segs []Segment, next int, loneEnding bool) {
	tok := r.m.Tokenizer
	tb := tok.TimestampBegin
	tokens := res.tokens
	isTS := func(i int) bool { return tokens[i] >= tb }
	n := len(tokens)
	singleTimestampEnding := n >= 2 && !isTS(n-2) && isTS(n-1)
	var consecutive []int
	for i := 0; i+1 < n; i++ {
		if isTS(i) && isTS(i+1) {
			consecutive = append(consecutive, i+1)
		}
	}
	newSeg := func(start, end float64, toks []int) Segment {
		toks = append([]int(nil), toks...)
		return Segment{
			Seek: seek, StartSec: start, EndSec: end, Start: seconds(start), End: seconds(end),
			Text: tok.DecodeText(toks), Tokens: toks, Temperature: res.temperature,
			AvgLogprob: res.avgLogprob, CompressionRatio: res.compressionRatio, NoSpeechProb: res.noSpeechProb,
		}
	}
	if len(consecutive) > 0 {
		slices := consecutive
		if singleTimestampEnding {
			slices = append(slices, n)
		}
		last := 0
		for _, cur := range slices {
			part := tokens[last:cur]
			start := timeOffset + float64(part[0]-tb)*precision
			end := timeOffset + float64(part[len(part)-1]-tb)*precision
			segs = append(segs, newSeg(start, end, part))
			last = cur
		}
		if singleTimestampEnding {
			return segs, seek + segmentSize, true
		}
		// Resume at the last timestamp: the text after it was cut off.
		return segs, seek + (tokens[last-1]-tb)*stride, false
	}
	duration := segmentDuration
	lastTS := -1
	for _, t := range tokens {
		if t >= tb {
			lastTS = t
		}
	}
	if lastTS >= 0 && lastTS != tb {
		duration = float64(lastTS-tb) * precision
	}
	segs = append(segs, newSeg(timeOffset, timeOffset+duration, tokens))
	return segs, seek + segmentSize, singleTimestampEnding
}

// decodeWithFallback decodes a window at each temperature in turn until the
// result is neither repetitive nor improbable (or looks like silence).
func (r *run) decodeWithFallback(ctx context.Context, audio *whisper.Cross, prompt []int, from, to time.Duration) (*decodeResult, error) {
	opt := r.opt
	temps := opt.Temperatures
	if len(temps) == 0 {
		temps = []float64{0}
	}
	var res *decodeResult
	reason := ""
	for i, t := range temps {
		if i > 0 && opt.Retry != nil {
			opt.Retry(Retry{Window: r.window, Temperature: t, Attempt: i + 1, Attempts: len(temps), From: from, To: to, Reason: reason})
		}
		o := decodeOptions{
			language: r.language, task: opt.Task, temperature: t, sampleLen: opt.SampleLen,
			patience: opt.Patience, lengthPenalty: opt.LengthPenalty, prompt: prompt,
			suppressTokens: r.suppress, suppressBlank: opt.SuppressBlank,
			withoutTimestamps: opt.WithoutTimestamps, maxInitialTimestamp: opt.MaxInitialTimestamp, rng: r.rng,
		}
		if t > 0 {
			o.bestOf = opt.BestOf
		} else {
			o.beamSize = opt.BeamSize
		}
		var err error
		if i > 0 {
			r.res.Stats.Fallbacks++
		}
		o.stats = r.res.Stats
		if res, err = r.m.decodeWindow(ctx, audio, o); err != nil {
			return nil, err
		}
		fallback := res.compressionRatio > opt.CompressionRatioThreshold || res.avgLogprob < opt.LogProbThreshold
		if res.noSpeechProb > opt.NoSpeechThreshold && res.avgLogprob < opt.LogProbThreshold {
			fallback = false // silence: retrying would only invent text
		}
		if !fallback {
			break
		}
		if res.compressionRatio > opt.CompressionRatioThreshold {
			reason = fmt.Sprintf("compression ratio %.2f > %.2f", res.compressionRatio, opt.CompressionRatioThreshold)
		} else {
			reason = fmt.Sprintf("average log probability %.2f < %.2f", res.avgLogprob, opt.LogProbThreshold)
		}
	}
	return res, nil
}

func isNaN(f float64) bool { return f != f }
