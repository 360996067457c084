package vad

import (
	"fmt"
	"math"
)

// Options are the segmentation rules, with faster-whisper's VadOptions
// defaults (DefaultOptions): threshold 0.5, negative threshold
// threshold-0.15 (at least 0.01), min speech 0 ms, max speech unbounded,
// min silence 2000 ms, speech padding 400 ms.
type Options struct {
	// Threshold: frames scoring at or above it are speech.
	Threshold float64 `json:"threshold"`
	// NegThreshold: inside speech, a frame below it counts as silence;
	// between the two thresholds speech continues. 0 means
	// max(Threshold-0.15, 0.01).
	NegThreshold float64 `json:"neg_threshold,omitempty"`
	// MinSpeechMs: speech regions this short or shorter are dropped.
	MinSpeechMs int `json:"min_speech_duration_ms"`
	// MaxSpeechSec splits longer regions (at a silence over 98 ms when
	// there is one); 0 or +Inf means unbounded.
	MaxSpeechSec float64 `json:"max_speech_duration_s,omitempty"`
	// MinSilenceMs: silence must last this long to end a region.
	MinSilenceMs int `json:"min_silence_duration_ms"`
	// SpeechPadMs widens each region on both sides.
	SpeechPadMs int `json:"speech_pad_ms"`
}

// DefaultOptions are faster-whisper's VadOptions defaults.
func DefaultOptions() Options {
	return Options{Threshold: 0.5, MinSpeechMs: 0, MinSilenceMs: 2000, SpeechPadMs: 400}
}

// Check reports an option out of range, naming it.
func (o Options) Check() error {
	switch {
	case !(o.Threshold > 0 && o.Threshold < 1):
		return fmt.Errorf("vad threshold %v: must be between 0 and 1", o.Threshold)
	case o.NegThreshold < 0 || o.NegThreshold >= 1 || math.IsNaN(o.NegThreshold):
		return fmt.Errorf("vad negative threshold %v: must be between 0 and 1", o.NegThreshold)
	case o.MinSpeechMs < 0:
		return fmt.Errorf("vad min speech %d ms: must not be negative", o.MinSpeechMs)
	case o.MinSilenceMs < 0:
		return fmt.Errorf("vad min silence %d ms: must not be negative", o.MinSilenceMs)
	case o.SpeechPadMs < 0:
		return fmt.Errorf("vad speech padding %d ms: must not be negative", o.SpeechPadMs)
	case o.MaxSpeechSec < 0 || math.IsNaN(o.MaxSpeechSec):
		return fmt.Errorf("vad max speech %v s: must not be negative", o.MaxSpeechSec)
	}
	return nil
}

// Region is a span of speech in samples, [Start, End).
type Region struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Regions applies faster-whisper's get_speech_timestamps to per-frame
// probabilities of a recording of n samples (frames of 512 samples).
func Regions(probs []float32, n int64, o Options) []Region {
	const win = Frame
	sr := float64(SampleRate)
	threshold := o.Threshold
	neg := o.NegThreshold
	if neg == 0 {
		neg = max(threshold-0.15, 0.01)
	}
	minSpeech := sr * float64(o.MinSpeechMs) / 1000
	pad := sr * float64(o.SpeechPadMs) / 1000
	maxSpeech := math.Inf(1)
	if o.MaxSpeechSec > 0 && !math.IsInf(o.MaxSpeechSec, 1) {
		maxSpeech = sr*o.MaxSpeechSec - win - 2*pad
	}
	minSilence := sr * float64(o.MinSilenceMs) / 1000
	minSilenceAtMax := sr * 98 / 1000

	var speeches []Region
	triggered := false
	var cur Region
	have := false
	var tempEnd, prevEnd, nextStart int64
	for i, pf := range probs {
		p := float64(pf)
		at := int64(win * i)
		if p >= threshold && tempEnd != 0 {
			tempEnd = 0
			if nextStart < prevEnd {
				nextStart = at
			}
		}
		if p >= threshold && !triggered {
			triggered = true
			cur, have = Region{Start: at}, true
			continue
		}
		if triggered && float64(at-cur.Start) > maxSpeech {
			if prevEnd != 0 {
				cur.End = prevEnd
				speeches = append(speeches, cur)
				cur, have = Region{}, false
				if nextStart < prevEnd {
					triggered = false
				} else {
					cur, have = Region{Start: nextStart}, true
				}
				prevEnd, nextStart, tempEnd = 0, 0, 0
			} else {
				cur.End = at
				speeches = append(speeches, cur)
				cur, have = Region{}, false
				prevEnd, nextStart, tempEnd = 0, 0, 0
				triggered = false
				continue
			}
		}
		if p < neg && triggered {
			if tempEnd == 0 {
				tempEnd = at
			}
			if float64(at-tempEnd) > minSilenceAtMax {
				prevEnd = tempEnd
			}
			if float64(at-tempEnd) < minSilence {
				continue
			}
			cur.End = tempEnd
			if float64(cur.End-cur.Start) > minSpeech {
				speeches = append(speeches, cur)
			}
			cur, have = Region{}, false
			prevEnd, nextStart, tempEnd = 0, 0, 0
			triggered = false
			continue
		}
	}
	if have && float64(n-cur.Start) > minSpeech {
		cur.End = n
		speeches = append(speeches, cur)
	}
	for i := range speeches {
		s := &speeches[i]
		if i == 0 {
			s.Start = int64(max(0, float64(s.Start)-pad))
		}
		if i != len(speeches)-1 {
			next := &speeches[i+1]
			silence := next.Start - s.End
			if float64(silence) < 2*pad {
				s.End += silence / 2
				next.Start = max(0, next.Start-silence/2)
			} else {
				s.End = int64(min(float64(n), float64(s.End)+pad))
				next.Start = int64(max(0, float64(next.Start)-pad))
			}
		} else {
			s.End = int64(min(float64(n), float64(s.End)+pad))
		}
	}
	return speeches
}
