package transcribe

import (
	"fmt"
	"io"
	"time"
)

// Stats is where one transcription's time went, stage by stage (printed by
// hark transcribe --stats and reported by the pipeline benchmark). Loading
// the model is the caller's to time: it happens once per Model.
type Stats struct {
	// Audio is reading the file: container decoding and resampling to
	// 16 kHz mono (engine/audio does both in one pass), over both passes
	// for a file; zero for samples given in memory.
	Audio time.Duration
	// VAD is the voice-activity pass, when on.
	VAD time.Duration
	// Mel is the log-mel spectrogram, both passes.
	Mel time.Duration
	// Language is language detection's decoder step (its window's encoder
	// run counts in Encoder).
	Language time.Duration
	// Encoder is the encoder and the cross-attention keys and values, once
	// per window; Windows counts the windows.
	Encoder time.Duration
	Windows int
	// Decoder is the decoder's forward passes and vocabulary projections;
	// Tokens counts the decoded positions (every row of a beam or best-of
	// group, every attempt of the fallback).
	Decoder time.Duration
	Tokens  int
	// Logic is the per-step work on the logits (suppression, timestamp
	// rules, sampling, beams) and the fallback's checks.
	Logic time.Duration
	// Fallbacks counts windows decoded again at a higher temperature.
	Fallbacks int
	// Words is word-level timing (alignment pass and DTW).
	Words time.Duration
}

// Total is the sum of the stages.
func (s *Stats) Total() time.Duration {
	return s.Audio + s.VAD + s.Mel + s.Language + s.Encoder + s.Decoder + s.Logic + s.Words
}

// Write prints one line per stage, with the per-window and per-token
// figures that compare with whisper.cpp's timings.
func (s *Stats) Write(w io.Writer) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	per := func(d time.Duration, n int) float64 { return ms(d) / float64(max(n, 1)) }
	fmt.Fprintf(w, "audio decode+resample %9.1f ms\n", ms(s.Audio))
	if s.VAD > 0 {
		fmt.Fprintf(w, "voice activity        %9.1f ms\n", ms(s.VAD))
	}
	fmt.Fprintf(w, "mel                   %9.1f ms\n", ms(s.Mel))
	fmt.Fprintf(w, "language detection    %9.1f ms\n", ms(s.Language))
	fmt.Fprintf(w, "encoder               %9.1f ms  %d windows, %.1f ms per window\n", ms(s.Encoder), s.Windows, per(s.Encoder, s.Windows))
	fmt.Fprintf(w, "decoder               %9.1f ms  %d tokens, %.2f ms per token\n", ms(s.Decoder), s.Tokens, per(s.Decoder, s.Tokens))
	fmt.Fprintf(w, "timestamps, fallback  %9.1f ms  %d fallbacks\n", ms(s.Logic), s.Fallbacks)
	fmt.Fprintf(w, "word timing           %9.1f ms\n", ms(s.Words))
	fmt.Fprintf(w, "total                 %9.1f ms\n", ms(s.Total()))
}

// since adds the time from t0 to *d (a nil d is allowed and ignored).
func since(d *time.Duration, t0 time.Time) {
	if d != nil {
		*d += time.Since(t0)
	}
}
