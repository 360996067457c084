package vad

import "hark/mlx"

// batchFrames is how many frames one Run scores (about 16 s of audio):
// enough to amortise the front end, small enough to keep memory flat.
const batchFrames = 512

// Scorer turns a stream of 16 kHz mono samples into per-frame speech
// probabilities, as Silero's reference does over the whole recording: frame
// k is samples [512k, 512k+512) with the 64 before it (zeros before the
// start), the LSTM state runs across all frames, and the last frame is
// zero-padded. Memory is one batch of frames plus the probabilities.
type Scorer struct {
	m       *Model
	st      State
	prev    [Context]float32 // the context for the next frame
	rows    []float32        // complete rows not yet scored
	partial []float32        // samples of the frame being filled
	probs   []float32
	n       int64
}

// NewScorer starts a stream with the LSTM state at zero.
func NewScorer(m *Model) *Scorer {
	return &Scorer{m: m, partial: make([]float32, 0, Frame)}
}

// Push adds samples.
func (s *Scorer) Push(samples []float32) {
	s.n += int64(len(samples))
	for len(samples) > 0 {
		k := min(Frame-len(s.partial), len(samples))
		s.partial = append(s.partial, samples[:k]...)
		samples = samples[k:]
		if len(s.partial) == Frame {
			s.addRow()
		}
	}
}

func (s *Scorer) addRow() {
	s.rows = append(s.rows, s.prev[:]...)
	s.rows = append(s.rows, s.partial...)
	copy(s.prev[:], s.partial[Frame-Context:])
	s.partial = s.partial[:0]
	if len(s.rows) >= batchFrames*rowLen {
		s.flush()
	}
}

func (s *Scorer) flush() {
	n := len(s.rows) / rowLen
	if n == 0 {
		return
	}
	rows := mlx.FromSlice(s.rows, n, rowLen)
	s.probs = append(s.probs, s.m.Run(rows, &s.st)...)
	rows.Free()
	s.rows = s.rows[:0]
}

// Finish scores what is left (the last frame zero-padded) and returns one
// probability per frame, ceil(samples/512) of them. It frees the state.
func (s *Scorer) Finish() []float32 {
	if len(s.partial) > 0 {
		for len(s.partial) < Frame {
			s.partial = append(s.partial, 0)
		}
		s.rows = append(s.rows, s.prev[:]...)
		s.rows = append(s.rows, s.partial...)
		s.partial = s.partial[:0]
	}
	s.flush()
	s.st.Free()
	return s.probs
}

// Samples is how many samples were pushed.
func (s *Scorer) Samples() int64 { return s.n }

// Probs scores samples in memory.
func Probs(m *Model, samples []float32) []float32 {
	s := NewScorer(m)
	s.Push(samples)
	return s.Finish()
}
