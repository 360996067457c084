package mel

import (
	"fmt"
	"math"
)

// Framer computes Whisper's mel frames from audio that arrives in pieces,
// holding only one frame's worth of samples, so a recording of any length
// can be processed window by window.
//
// Frames come out raw: log10(max(mel, 1e-10)) per band, before Whisper's
// "max - 8" floor and (x+4)/4 scaling, which need the maximum over the
// whole spectrogram. Framer tracks that maximum (Max). A caller that wants
// transcribe()'s exact numbers for a long file makes two passes (the first
// only to learn Max); one pass with the running maximum differs only in
// which very quiet values get floored.
type Framer struct {
	fb    *Filters
	st    *stft
	buf   []float32 // samples from absolute index base on
	base  int64
	total int64 // samples pushed
	next  int64 // next frame to emit
	melE  []float64
	max   float64
	done  bool
}

// NewFramer returns a Framer for nMels mel bands.
func NewFramer(nMels int) (*Framer, error) {
	fb, err := cachedFilters(nMels)
	if err != nil {
		return nil, err
	}
	st, err := newSTFT()
	if err != nil {
		return nil, err
	}
	return &Framer{fb: fb, st: st, melE: make([]float64, nMels), max: math.Inf(-1)}, nil
}

// NMels is the number of values per frame.
func (f *Framer) NMels() int { return f.fb.NMels }

// Frames is how many frames have been emitted so far.
func (f *Framer) Frames() int64 { return f.next }

// Max is the largest raw value emitted so far, in float64 as LogMel keeps
// it (the floor is rounded from max-8, not from a rounded max).
func (f *Framer) Max() float64 { return f.max }

// Push adds samples (16 kHz mono) and appends every frame they complete to
// out, frame after frame, NMels values each.
func (f *Framer) Push(samples []float32, out []float32) []float32 {
	if f.done {
		return out
	}
	f.buf = append(f.buf, samples...)
	f.total += int64(len(samples))
	// Frame t reads samples up to 160t+199; frames that reach the end wait
	// for Finish, where the reflection at the end is known.
	for HopLength*f.next+NFFT/2 < f.total {
		out = f.emit(out, -1)
	}
	f.compact()
	return out
}

// Finish appends padding zeros (NSamples for transcribe's layout, 0 for a
// plain log_mel_spectrogram) and emits the remaining frames: after it,
// Frames() == (samples + padding) / 160 exactly as LogMel.
func (f *Framer) Finish(padding int, out []float32) ([]float32, error) {
	if f.done {
		return out, nil
	}
	n := f.total + int64(padding)
	if padding < 0 || n <= NFFT/2 {
		return out, fmt.Errorf("mel: %d samples is too short for a spectrogram (need more than %d)", n, NFFT/2)
	}
	f.done = true
	for f.next < n/HopLength {
		out = f.emit(out, n)
	}
	return out, nil
}

// emit computes frame f.next. n is the padded length when known (Finish),
// or -1 while the end has not been seen.
func (f *Framer) emit(out []float32, n int64) []float32 {
	start := f.next*HopLength - NFFT/2
	for j := range NFFT {
		i := start + int64(j)
		if i < 0 {
			i = -i
		} else if n >= 0 && i >= n {
			i = 2*(n-1) - i
		}
		var v float64
		if i < f.total {
			v = float64(f.buf[i-f.base])
		}
		f.st.buf[j] = v * hann[j]
	}
	f.st.fft.power(f.st.power, f.st.buf)
	f.fb.apply(f.melE, f.st.power)
	for _, e := range f.melE {
		v := math.Log10(max(e, 1e-10))
		f.max = max(f.max, v)
		out = append(out, float32(v))
	}
	f.next++
	return out
}

// compact drops samples no later frame reads. The first two frames reflect
// samples 1..200, so nothing is dropped before frame 2.
func (f *Framer) compact() {
	keepFrom := f.next*HopLength - NFFT/2
	if f.next < 2 || keepFrom <= f.base {
		return
	}
	drop := keepFrom - f.base
	if drop < int64(len(f.buf))/2 {
		return
	}
	k := copy(f.buf, f.buf[drop:])
	f.buf = f.buf[:k]
	f.base = keepFrom
}

// Normalize turns raw frames (frame-major, as Framer emits them) into a
// Spectrogram in Whisper's (mel, frame) layout, applying the floor
// maxRaw-8 and the (x+4)/4 scaling with the given maximum.
func Normalize(raw []float32, nMels int, maxRaw float64) (*Spectrogram, error) {
	if nMels <= 0 || len(raw)%nMels != 0 {
		return nil, fmt.Errorf("mel: %d raw values do not divide into %d bands", len(raw), nMels)
	}
	frames := len(raw) / nMels
	s := &Spectrogram{NMels: nMels, NFrames: frames, Data: make([]float32, len(raw))}
	floor := float32(maxRaw - 8)
	for t := range frames {
		for m, v := range raw[t*nMels : (t+1)*nMels] {
			s.Data[m*frames+t] = (max(v, floor) + 4) / 4
		}
	}
	return s, nil
}

// NormalizeWindow is Normalize followed by Segment(0, frames): it lays out
// up to NFrames raw frames (frame-major) as one window, zero past the last
// frame as transcribe() pads a short window. It is how a streamed run
// builds a window without normalising the whole recording.
func NormalizeWindow(raw []float32, nMels int, maxRaw float64) (*Spectrogram, error) {
	if nMels <= 0 || len(raw)%nMels != 0 {
		return nil, fmt.Errorf("mel: %d raw values do not divide into %d bands", len(raw), nMels)
	}
	frames := min(len(raw)/nMels, NFrames)
	s := &Spectrogram{NMels: nMels, NFrames: NFrames, Data: make([]float32, nMels*NFrames)}
	floor := float32(maxRaw - 8)
	for t := range frames {
		for m, v := range raw[t*nMels : (t+1)*nMels] {
			s.Data[m*NFrames+t] = (max(v, floor) + 4) / 4
		}
	}
	return s, nil
}
