package transcription

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"hark/engine/transcribe"
)

// maxPromptRunes bounds the initial prompt: Whisper keeps at most half its
// 448-token context for it, so more text is cut anyway.
const maxPromptRunes = 2000

// normalizeAdvanced checks the advanced knobs (temperature schedule,
// thresholds, initial prompt) with the engine's own rules.
func (o Options) normalizeAdvanced() (Options, error) {
	if len(o.Temperatures) > 0 {
		if err := transcribe.CheckTemperatures(o.Temperatures); err != nil {
			return o, err
		}
	}
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN() // unset: not checked
		}
		return *p
	}
	if err := transcribe.CheckThresholds(val(o.NoSpeechThreshold), val(o.LogprobThreshold), val(o.CompressionRatioThreshold)); err != nil {
		return o, err
	}
	for _, p := range []*float64{o.NoSpeechThreshold, o.LogprobThreshold, o.CompressionRatioThreshold} {
		if p != nil && math.IsNaN(*p) {
			return o, errors.New("a threshold is not a number")
		}
	}
	o.InitialPrompt = strings.TrimSpace(o.InitialPrompt)
	if n := len([]rune(o.InitialPrompt)); n > maxPromptRunes {
		return o, fmt.Errorf("the initial prompt is %d characters; at most %d (Whisper keeps only the end of a longer one)", n, maxPromptRunes)
	}
	return o, nil
}

// AdvancedFromQuery reads the advanced knobs of an upload's query string
// (?temperatures=0,0.2&noSpeechThreshold=0.6&logprobThreshold=-1&
// compressionRatioThreshold=2.4&initialPrompt=TEXT) into o.
func AdvancedFromQuery(q url.Values, o *Options) error {
	if s := q.Get("temperatures"); s != "" {
		ts, err := transcribe.ParseTemperatures(s)
		if err != nil {
			return err
		}
		o.Temperatures = ts
	}
	for _, f := range []struct {
		key string
		dst **float64
	}{
		{"noSpeechThreshold", &o.NoSpeechThreshold},
		{"logprobThreshold", &o.LogprobThreshold},
		{"compressionRatioThreshold", &o.CompressionRatioThreshold},
	} {
		s := q.Get(f.key)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s %q is not a number", f.key, s)
		}
		*f.dst = &v
	}
	o.InitialPrompt = q.Get("initialPrompt")
	return nil
}

// retryNote is what the queue shows while a window is decoded again.
func retryNote(r transcribe.Retry) string {
	return fmt.Sprintf("Retrying window %d at temperature %.1f", r.Window, r.Temperature)
}

// retryDone places a retry on the progress bar: the window's attempts
// share its span, so the bar moves with each one rather than stalling.
func retryDone(r transcribe.Retry) time.Duration {
	if r.Attempts <= 0 || r.To <= r.From {
		return r.From
	}
	return r.From + (r.To-r.From)*time.Duration(r.Attempt-1)/time.Duration(r.Attempts)
}

// estimateETA is the seconds left at the measured speed (audio seconds
// done per wall second since decoding began), -1 while unknown.
func estimateETA(elapsed time.Duration, done, total float64) float64 {
	switch {
	case total > 0 && done >= total:
		return 0
	case done <= 0 || elapsed <= 0 || total <= 0:
		return -1
	}
	return elapsed.Seconds() * (total - done) / done
}
