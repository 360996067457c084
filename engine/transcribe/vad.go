package transcribe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"hark/engine/audio"
	"hark/engine/mel"
	"hark/engine/vad"
)

// With Options.VAD set, Silero VAD finds the speech first and Whisper
// decodes only that, the regions laid end to end as faster-whisper does;
// every time in the result is then mapped back to the recording. A
// recording without speech gives no segments, without running Whisper.

// Gap is a span of the recording that VAD skipped, in seconds.
type Gap struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// sampleSource is a stream of 16 kHz mono samples: an audio.Stream, or
// the speech regions of one.
type sampleSource interface {
	Next(dst []float32) (int, error)
	Pos() int64
	Info() audio.FileInfo
	Close() error
}

func openSamples(path string, speech *vad.Map) (sampleSource, error) {
	s, err := audio.Open(path, audio.Options{})
	if err != nil {
		return nil, err
	}
	if speech == nil {
		return s, nil
	}
	return &gated{s: s, regions: speech.Regions()}, nil
}

// gated passes on only the samples inside regions.
type gated struct {
	s       *audio.Stream
	regions []vad.Region
	i       int   // the region being read
	at      int64 // position in the recording
	out     int64
	buf     []float32
}

func (g *gated) Info() audio.FileInfo { return g.s.Info() }
func (g *gated) Pos() int64           { return g.out }
func (g *gated) Close() error         { return g.s.Close() }

func (g *gated) Next(dst []float32) (int, error) {
	if len(g.buf) < len(dst) {
		g.buf = make([]float32, len(dst))
	}
	n := 0
	for n == 0 {
		if g.i >= len(g.regions) {
			return 0, io.EOF // nothing after the last region is needed
		}
		k, err := g.s.Next(g.buf[:len(dst)])
		for j := 0; j < k && g.i < len(g.regions); {
			r := g.regions[g.i]
			pos := g.at + int64(j)
			switch {
			case pos >= r.End:
				g.i++
			case pos < r.Start:
				j += int(min(r.Start-pos, int64(k-j)))
			default:
				c := int(min(r.End-pos, int64(k-j)))
				n += copy(dst[n:], g.buf[j:j+c])
				j += c
			}
		}
		g.at += int64(k)
		g.out += int64(n)
		if err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// transcribeFileSpeech reads the file once for VAD, then transcribes its
// speech regions.
func (m *Model) transcribeFileSpeech(ctx context.Context, path string, opt Options, onSegment func(Segment)) (*Result, error) {
	t0 := time.Now()
	_, regions, n, err := SpeechRegions(ctx, path, *opt.VAD, opt.ScanProgress)
	if err != nil {
		return nil, err
	}
	vadTime := time.Since(t0)
	sm := vad.NewMap(regions)
	if n == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoAudio)
	}
	if sm.Samples() == 0 {
		return m.noSpeech(sm, n, opt), nil
	}
	o := opt
	o.VAD = nil
	res, err := m.transcribeFile(ctx, path, sm, o, speechOnly(sm, onSegment))
	if res != nil && res.Stats != nil {
		res.Stats.VAD += vadTime
	}
	return mapped(res, sm, n), err
}

// SpeechRegions runs VAD over a file: the per-frame probabilities, the
// speech regions in samples, and the recording's length in samples.
// progress (may be nil) is called as the file is read, with done < total.
func SpeechRegions(ctx context.Context, path string, o vad.Options, progress func(done, total time.Duration)) (probs []float32, regions []vad.Region, samples int64, err error) {
	if err := o.Check(); err != nil {
		return nil, nil, 0, err
	}
	model, err := vad.Load()
	if err != nil {
		return nil, nil, 0, err
	}
	s, err := audio.Open(path, audio.Options{})
	if err != nil {
		return nil, nil, 0, err
	}
	defer s.Close()
	var total time.Duration
	if d := s.Info().Duration; d > 0 {
		total = seconds(d)
	}
	sc := vad.NewScorer(model)
	buf := make([]float32, 16*chunkSamples)
	for {
		if err := ctx.Err(); err != nil {
			sc.Finish()
			return nil, nil, 0, err
		}
		n, err := s.Next(buf)
		sc.Push(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sc.Finish()
			return nil, nil, 0, pathErr(path, err)
		}
		if done := seconds(float64(s.Pos()) / mel.SampleRate); progress != nil && done < total {
			progress(done, total)
		}
	}
	probs = sc.Finish()
	return probs, vad.Regions(probs, s.Pos(), o), s.Pos(), nil
}

// remap moves a segment (and its words) from the speech timeline to the
// recording's. A word is kept whole in the region of its middle; a
// segment with words spans its words, as faster-whisper does.
func remap(s *Segment, m *vad.Map) {
	// A start at a join goes after the silence, an end before it, unless
	// that would put the end before the start (an empty segment there).
	si, ei := m.Index(s.StartSec, false), m.Index(s.EndSec, true)
	s.StartSec, s.EndSec = m.Shift(s.StartSec, si), m.Shift(s.EndSec, max(si, ei))
	for i := range s.Words {
		w := &s.Words[i]
		k := m.Index((w.StartSec+w.EndSec)/2, false)
		w.StartSec, w.EndSec = m.Shift(w.StartSec, k), m.Shift(w.EndSec, k)
		w.Start, w.End = seconds(w.StartSec), seconds(w.EndSec)
	}
	if len(s.Words) > 0 {
		s.StartSec, s.EndSec = s.Words[0].StartSec, s.Words[len(s.Words)-1].EndSec
	}
	s.Start, s.End = seconds(s.StartSec), seconds(s.EndSec)
	s.Seek = int(math.Round(m.Start(float64(s.Seek)*hopSeconds) / hopSeconds))
}

// finishSpeech maps a speech-timeline result back and records the gaps.
func finishSpeech(res *Result, m *vad.Map, n int64) {
	if res == nil {
		return
	}
	res.Duration = seconds(float64(n) / mel.SampleRate)
	res.Skipped = []Gap{}
	for _, g := range vad.Gaps(m.Regions(), n) {
		res.Skipped = append(res.Skipped, Gap{Start: float64(g.Start) / mel.SampleRate, End: float64(g.End) / mel.SampleRate})
	}
}

// speechOnly wraps onSegment so segments reach it on the recording's
// timeline.
func speechOnly(m *vad.Map, onSegment func(Segment)) func(Segment) {
	if onSegment == nil {
		return nil
	}
	return func(s Segment) {
		// The words share their array with the result's segment, which
		// mapped() remaps at the end: remap a copy, not them twice.
		s.Words = slices.Clone(s.Words)
		remap(&s, m)
		onSegment(s)
	}
}

// transcribeSpeech is Transcribe with VAD on.
func (m *Model) transcribeSpeech(ctx context.Context, samples []float32, opt Options, onSegment func(Segment)) (*Result, error) {
	model, err := vad.Load()
	if err != nil {
		return nil, err
	}
	if err := opt.VAD.Check(); err != nil {
		return nil, err
	}
	n := int64(len(samples))
	sm := vad.NewMap(vad.Regions(vad.Probs(model, samples), n, *opt.VAD))
	if sm.Samples() == 0 {
		return m.noSpeech(sm, n, opt), nil
	}
	speech := make([]float32, 0, sm.Samples())
	for _, r := range sm.Regions() {
		speech = append(speech, samples[r.Start:r.End]...)
	}
	o := opt
	o.VAD = nil
	res, err := m.Transcribe(ctx, speech, o, speechOnly(sm, onSegment))
	return mapped(res, sm, n), err
}

func mapped(res *Result, sm *vad.Map, n int64) *Result {
	if res == nil {
		return nil
	}
	for i := range res.Segments {
		remap(&res.Segments[i], sm)
	}
	finishSpeech(res, sm, n)
	// Each gap is marked on the first segment after it (gaps between the
	// same two segments merge).
	k := 0
	for _, g := range res.Skipped {
		for k < len(res.Segments) && (res.Segments[k].StartSec < g.End || strings.TrimSpace(res.Segments[k].Text) == "") {
			k++
		}
		if k == len(res.Segments) {
			break
		}
		if s := &res.Segments[k]; s.SkippedBefore == nil {
			s.SkippedBefore = &Gap{Start: g.Start, End: g.End}
		} else {
			s.SkippedBefore.End = g.End
		}
	}
	return res
}

// noSpeech is the result for a recording VAD found no speech in.
func (m *Model) noSpeech(sm *vad.Map, n int64, opt Options) *Result {
	res := &Result{Segments: []Segment{}, Language: opt.Language, Stats: &Stats{}}
	if !m.Tokenizer.Multilingual {
		res.Language = "en"
	}
	finishSpeech(res, sm, n)
	if opt.Progress != nil {
		opt.Progress(res.Duration, res.Duration)
	}
	return res
}
