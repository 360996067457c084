package transcribe

import "slices"

// Checkpoint is a transcription's state after one decoded window, enough
// to resume it there after a crash: Options.Checkpoint receives one per
// window with that window's new segments, and Options.Resume takes the
// latest with every segment so far. Times are on the decoded timeline
// (the speech alone, with VAD), which a resumed run over the same file
// and options rebuilds identically. Greedy and beam decoding resume
// exactly; a window sampled at a temperature above 0 draws other samples
// than the uninterrupted run would have.
type Checkpoint struct {
	// Seek is the mel frame the next window starts at.
	Seek             int     `json:"seek"`
	PromptResetSince int     `json:"prompt_reset_since"`
	LastSpeech       float64 `json:"last_speech"`
	Language         string  `json:"language"`
	Windows          int     `json:"windows"`
	// Segments are the window's new segments (in Options.Resume: all so far).
	Segments []Segment `json:"segments"`
}

// restore puts a checkpoint's segments back with their Durations (JSON
// keeps only the seconds).
func restoreSegments(segs []Segment) []Segment {
	out := slices.Clone(segs)
	for i := range out {
		s := &out[i]
		s.Start, s.End = seconds(s.StartSec), seconds(s.EndSec)
		s.Words = slices.Clone(s.Words)
		for j := range s.Words {
			w := &s.Words[j]
			w.Start, w.End = seconds(w.StartSec), seconds(w.EndSec)
		}
	}
	return out
}

// checkpoint reports the state after a window whose new segments start at
// index from of the result.
func (r *run) checkpoint(seek, promptResetSince, from int) {
	if r.opt.Checkpoint == nil {
		return
	}
	r.opt.Checkpoint(Checkpoint{
		Seek: seek, PromptResetSince: promptResetSince, LastSpeech: r.lastSpeech, Language: r.language,
		Windows: r.window, Segments: slices.Clone(r.res.Segments[from:]),
	})
}
