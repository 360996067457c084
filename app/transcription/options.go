package transcription

import (
	"fmt"
	"path/filepath"
	"strings"

	"hark/models/whisper"
)

// Options choose how files are transcribed.
type Options struct {
	// Model is a speech model ID (fingerprint, org/repo or path); empty
	// means Settings' default speech model.
	Model string `json:"model"`
	// Language is a code or English name; "" or "auto" detects it.
	Language string `json:"language"`
	// Task is "transcribe" (default) or "translate" (into English).
	Task string `json:"task"`
	// BeamSize > 1 uses beam search; 0 or 1 decode greedily.
	BeamSize int `json:"beamSize"`
	// NoFallback decodes each window once at temperature 0 instead of
	// retrying doubtful windows at higher temperatures: faster, less robust.
	NoFallback bool `json:"noFallback"`
	// NoVAD decodes the whole recording; by default only the speech
	// Silero VAD finds is decoded (faster-whisper's VadOptions defaults).
	NoVAD bool `json:"noVAD,omitempty"`
	// VADThreshold is the speech probability a frame needs; 0 = 0.5.
	VADThreshold float64 `json:"vadThreshold,omitempty"`
	// WordTimestamps times each word (kept with the transcript: JSON
	// exports list them, SRT/VTT exports can cue them one by one).
	WordTimestamps bool `json:"wordTimestamps,omitempty"`

	// The advanced knobs, OpenAI's names; nil or empty keeps OpenAI's
	// defaults (advanced.go).
	Temperatures              []float64 `json:"temperatures,omitempty"`
	NoSpeechThreshold         *float64  `json:"noSpeechThreshold,omitempty"`
	LogprobThreshold          *float64  `json:"logprobThreshold,omitempty"`
	CompressionRatioThreshold *float64  `json:"compressionRatioThreshold,omitempty"`
	InitialPrompt             string    `json:"initialPrompt,omitempty"`
}

// maxBeam bounds beam search: more beams cost time linearly and stop
// helping well before this.
const maxBeam = 16

// normalize checks the options and fills defaults; errors are the caller's.
func (o Options) Normalize() (Options, error) {
	o.Model = strings.TrimSpace(o.Model)
	o.Language = strings.TrimSpace(o.Language)
	if strings.EqualFold(o.Language, "auto") {
		o.Language = ""
	}
	if o.Language != "" {
		code, ok := whisper.LookupLanguage(o.Language)
		if !ok {
			return o, fmt.Errorf("unknown language %q (use a code such as en, or auto)", o.Language)
		}
		o.Language = code
	}
	switch o.Task {
	case "":
		o.Task = "transcribe"
	case "transcribe", "translate":
	default:
		return o, fmt.Errorf("task %q: want transcribe or translate", o.Task)
	}
	if o.VADThreshold != 0 && !(o.VADThreshold > 0 && o.VADThreshold < 1) {
		return o, fmt.Errorf("vad threshold %v: want a probability between 0 and 1", o.VADThreshold)
	}
	if o.BeamSize < 0 || o.BeamSize > maxBeam {
		return o, fmt.Errorf("beam size %d: want 0 (greedy) to %d", o.BeamSize, maxBeam)
	}
	return o.normalizeAdvanced()
}

// TranscriptEvent is published on "transcripts" when one is saved or deleted.
type TranscriptEvent struct {
	ID     int64  `json:"id"`
	Change string `json:"change"` // "saved" or "deleted"
}

// DisplayName is what the UI calls a file: its base name.
func DisplayName(path string) string {
	name := filepath.Base(path)
	if name == "." || name == string(filepath.Separator) {
		return path
	}
	return name
}
