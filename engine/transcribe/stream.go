package transcribe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"hark/engine/mel"
	"hark/engine/vad"
)

// frameSource hands the decode loop its windows of transcribe()'s padded
// spectrogram (the audio followed by 30 s of zeros).
type frameSource interface {
	// window is pad_or_trim(mel[:, seek:seek+size], 3000). The loop never
	// asks for a seek below an earlier one, which is what lets a stream
	// forget the frames behind it.
	window(seek, size int) (*mel.Spectrogram, error)
}

// wholeMel is a spectrogram computed in one go from samples in memory.
type wholeMel struct{ spec *mel.Spectrogram }

func (w wholeMel) window(seek, size int) (*mel.Spectrogram, error) {
	return w.spec.Segment(seek, size), nil
}

// chunkSamples is how much audio the passes over a file read at a time
// (1 s, 100 mel frames).
const chunkSamples = mel.SampleRate

// scanEvery is how often (in chunks) the first pass reports progress.
const scanEvery = 60

// scanFile is the first pass over a file: OpenAI floors every value at the
// maximum of the whole spectrogram minus 8, so no window can be normalised
// before the last sample is seen. It keeps only that maximum and the
// sample count. progress (may be nil) is as Options.ScanProgress says.
// With speech (VAD on) only those regions are read, laid end to end.
func scanFile(ctx context.Context, path string, nMels int, speech *vad.Map, progress func(done, total time.Duration), st *Stats) (samples int64, maxRaw float64, err error) {
	s, err := openSamples(path, speech)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	fr, err := mel.NewFramer(nMels)
	if err != nil {
		return 0, 0, err
	}
	var total time.Duration
	if speech != nil {
		total = seconds(float64(speech.Samples()) / mel.SampleRate)
	} else if d := s.Info().Duration; d > 0 {
		total = seconds(d)
	}
	buf := make([]float32, chunkSamples)
	var frames []float32 // reused: only the running maximum matters here
	for i := 1; ; i++ {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		n, err := s.Next(buf)
		t1 := time.Now()
		frames = fr.Push(buf[:n], frames[:0])
		st.Audio += t1.Sub(t0)
		since(&st.Mel, t1)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if done := seconds(float64(s.Pos()) / mel.SampleRate); progress != nil && i%scanEvery == 0 && done < total {
			progress(done, total)
		}
	}
	if s.Pos() == 0 {
		return 0, 0, nil
	}
	// The padding frames count too: near the end of the audio they still
	// see some of it.
	t0 := time.Now()
	if _, err := fr.Finish(mel.NSamples, frames[:0]); err != nil {
		return 0, 0, err
	}
	since(&st.Mel, t0)
	if progress != nil {
		d := seconds(float64(s.Pos()) / mel.SampleRate)
		progress(d, d)
	}
	return s.Pos(), fr.Max(), nil
}

// melStream is the second pass: it decodes the file again and computes
// frames only as far as the current window needs, keeping the frames from
// the current seek on. It holds at most a window plus the 30 s of padding
// frames that come out together at the end, whatever the file's length.
type melStream struct {
	s       sampleSource
	fr      *mel.Framer
	nMels   int
	maxRaw  float64
	samples int64     // counted by the first pass
	raw     []float32 // raw frames from base on, frame-major
	base    int
	chunk   []float32
	ended   bool
	st      *Stats
}

func openMelStream(path string, nMels int, speech *vad.Map, samples int64, maxRaw float64, st *Stats) (*melStream, error) {
	fr, err := mel.NewFramer(nMels)
	if err != nil {
		return nil, err
	}
	s, err := openSamples(path, speech)
	if err != nil {
		return nil, err
	}
	return &melStream{s: s, fr: fr, nMels: nMels, maxRaw: maxRaw, samples: samples, chunk: make([]float32, chunkSamples), st: st}, nil
}

func (m *melStream) Close() error { return m.s.Close() }

// have is how many frames are held.
func (m *melStream) have() int { return len(m.raw) / m.nMels }

func (m *melStream) window(seek, size int) (*mel.Spectrogram, error) {
	if seek < m.base {
		return nil, fmt.Errorf("window at mel frame %d, but the stream is past frame %d", seek, m.base)
	}
	end := seek + min(max(size, 0), mel.NFrames)
	for m.base+m.have() < end && !m.ended {
		m.drop(seek)
		if err := m.read(); err != nil {
			return nil, err
		}
	}
	m.drop(seek)
	from := min(seek-m.base, m.have())
	to := min(end-m.base, m.have())
	defer since(&m.st.Mel, time.Now())
	return mel.NormalizeWindow(m.raw[from*m.nMels:to*m.nMels], m.nMels, m.maxRaw)
}

// drop forgets the frames before seek: windows only move forward.
func (m *melStream) drop(seek int) {
	k := min(seek-m.base, m.have())
	if k <= 0 {
		return
	}
	n := copy(m.raw, m.raw[k*m.nMels:])
	m.raw = m.raw[:n]
	m.base += k
}

// read decodes one chunk and appends the frames it completes; at the end
// of the audio it appends the rest, padding included.
func (m *melStream) read() error {
	t0 := time.Now()
	n, err := m.s.Next(m.chunk)
	t1 := time.Now()
	m.raw = m.fr.Push(m.chunk[:n], m.raw)
	m.st.Audio += t1.Sub(t0)
	since(&m.st.Mel, t1)
	switch {
	case errors.Is(err, io.EOF):
		if m.s.Pos() != m.samples {
			return m.changed()
		}
		m.ended = true
		defer since(&m.st.Mel, time.Now())
		m.raw, err = m.fr.Finish(mel.NSamples, m.raw)
		return err
	case err != nil:
		return err
	case m.s.Pos() > m.samples:
		return m.changed()
	}
	return nil
}

// changed reports a file whose second read differs from the first, whose
// maximum is then no longer the right one.
func (m *melStream) changed() error {
	return fmt.Errorf("the file changed while it was transcribed (%d samples, then %d)", m.samples, m.s.Pos())
}
