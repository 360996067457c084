// Package transcribe turns audio into timed text with a Whisper model,
// following OpenAI's transcribe(): 30-second windows, seeking by the last
// predicted timestamp, timestamp rules, temperature fallback, no-speech
// detection, conditioning on the previous text, and optional beam search.
package transcribe

import (
	"hark/engine/vad"
	"math"
	"time"
)

// Options are transcribe()'s parameters. Start from DefaultOptions: the zero
// value disables fallback differently from OpenAI (thresholds of 0).
// A threshold set to NaN is "None" in OpenAI's terms (check disabled).
type Options struct {
	// Language is a code such as "en"; "" detects it from the first window.
	Language string
	// Task is "transcribe" (default) or "translate" (to English).
	Task string

	// Temperatures are tried in order until a window's result passes the
	// thresholds; a single 0 means greedy decoding without fallback.
	Temperatures []float64
	// CompressionRatioThreshold: retry when the text's gzip ratio is higher
	// (repetitive output). LogProbThreshold: retry when the average token
	// log-probability is lower. NoSpeechThreshold: a window whose
	// no-speech probability is higher, and whose text is unlikely, is
	// treated as silence and skipped.
	CompressionRatioThreshold float64
	LogProbThreshold          float64
	NoSpeechThreshold         float64

	// ConditionOnPreviousText feeds the text so far as the prompt of the
	// next window (better consistency, risk of repetition loops).
	ConditionOnPreviousText bool
	// InitialPrompt conditions the first window (names, spelling, style).
	InitialPrompt string
	// CarryInitialPrompt keeps the initial prompt in front of every
	// window's prompt.
	CarryInitialPrompt bool

	// BeamSize > 0 uses beam search at temperature 0; Patience (default 1)
	// lets it collect more finished candidates before stopping.
	BeamSize int
	Patience float64
	// BestOf is how many samples are drawn at temperature > 0 (default 5).
	BestOf int
	// LengthPenalty ranks candidates by logprob/((5+len)/6)^p; 0 ranks by
	// logprob/len, as OpenAI does when it is None.
	LengthPenalty float64

	// SuppressTokens are ids never sampled; -1 stands for Whisper's
	// non-speech symbols. nil means {-1}.
	SuppressTokens []int
	// SuppressBlank forbids a blank or end-of-text as a window's first token.
	SuppressBlank bool
	// WithoutTimestamps decodes text only (one segment per window).
	WithoutTimestamps bool
	// MaxInitialTimestamp bounds the first timestamp of a window, seconds.
	MaxInitialTimestamp float64
	// SampleLen caps sampled tokens per window; 0 = half the text context.
	SampleLen int

	// WordTimestamps adds per-word times from cross-attention alignment.
	WordTimestamps bool

	// VAD, when set, decodes only the speech Silero VAD finds (see vad.go);
	// nil decodes everything, as OpenAI does.
	VAD *vad.Options

	// Seed makes temperature sampling reproducible.
	Seed int64

	// Progress, when set, is called after each window with the audio time
	// done and the total.
	Progress func(done, total time.Duration)
	// Checkpoint, when set, gets the state after each decoded window, and
	// Resume, when set, continues from such a state (resume.go).
	Checkpoint func(Checkpoint)
	Resume     *Checkpoint
	// Retry, when set, is called before a window is decoded again at a
	// higher temperature (the first result was repetitive or improbable),
	// so a long fallback shows as progress rather than a stall.
	Retry func(Retry)
	// ScanProgress, when set, is called while TranscribeFile first reads
	// the whole file, before any window is decoded (OpenAI's floor needs
	// the maximum of the whole spectrogram), with the audio time read and
	// the length the container announces; done < total on every call but
	// the last, which comes once the file is read and has done == total
	// (the only call when the length is not announced). Transcribe, given
	// samples, does not call it.
	ScanProgress func(done, total time.Duration)
}

// DefaultOptions are OpenAI's transcribe() defaults (language detection,
// greedy decoding, temperature fallback 0, 0.2 ... 1.0, thresholds 2.4 /
// -1.0 / 0.6), plus best-of-5 for the sampled fallbacks as OpenAI's
// command line sets it (the Python function leaves it at one sample).
func DefaultOptions() Options {
	return Options{
		Task:                      "transcribe",
		Temperatures:              []float64{0, 0.2, 0.4, 0.6, 0.8, 1.0},
		CompressionRatioThreshold: 2.4,
		LogProbThreshold:          -1.0,
		NoSpeechThreshold:         0.6,
		ConditionOnPreviousText:   true,
		BestOf:                    5,
		Patience:                  1,
		SuppressBlank:             true,
		MaxInitialTimestamp:       1.0,
	}
}

// Retry describes one temperature fallback: window Window (1-based, in
// decoding order) is decoded again at Temperature, attempt Attempt (2 is
// the first retry) of at most Attempts. From and To are the window's span
// on the timeline Progress reports, and Reason says why the last attempt
// was rejected.
type Retry struct {
	Window      int
	Temperature float64
	Attempt     int
	Attempts    int
	From, To    time.Duration
	Reason      string
}

// None is the value of a disabled threshold.
var None = math.NaN()

// Segment is one timed piece of text.
type Segment struct {
	ID   int `json:"id"`
	Seek int `json:"seek"` // mel frame (10 ms) where its window started
	// Start and End are relative to the start of the audio. They can pass
	// the end of the audio when the model says so (OpenAI does not clip).
	Start time.Duration `json:"-"`
	End   time.Duration `json:"-"`
	// StartSec and EndSec are Start and End in seconds computed exactly as
	// OpenAI does (float64), for output formats that print seconds.
	StartSec         float64 `json:"start"`
	EndSec           float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int   `json:"tokens"`
	Temperature      float64 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
	Words            []Word  `json:"words,omitempty"`
	// SkippedBefore is the silence VAD skipped just before this segment
	// (the last segment before a gap carries none), for views that mark it.
	SkippedBefore *Gap `json:"skipped_before,omitempty"`
}

// Word is one word with its time span (word-level timestamps).
type Word struct {
	Word        string        `json:"word"`
	Start       time.Duration `json:"-"`
	End         time.Duration `json:"-"`
	StartSec    float64       `json:"start"`
	EndSec      float64       `json:"end"`
	Probability float64       `json:"probability"`
}

// Result is a whole transcription.
type Result struct {
	Text     string    `json:"text"`
	Segments []Segment `json:"segments"`
	Language string    `json:"language"`
	// LanguageProbs is set when the language was detected.
	LanguageProbs map[string]float64 `json:"-"`
	// Duration is the length of the audio.
	Duration time.Duration `json:"-"`
	// Skipped are the spans VAD found no speech in (nil without VAD).
	Skipped []Gap `json:"skipped,omitempty"`
	// Stats is the time spent in each stage (never nil in a Result that
	// Transcribe or TranscribeFile returns).
	Stats *Stats `json:"-"`
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
