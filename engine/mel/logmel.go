// Package mel computes Whisper's log-mel spectrogram exactly as OpenAI's
// whisper/audio.py does: 400-point periodic-Hann STFT with hop 160 and
// reflect padding (torch.stft center=True), last frame dropped, power
// spectrum, Slaney mel filters, log10 clamped at 1e-10, dynamic range
// limited to 8 (log10 units) below the maximum, then (x+4)/4. It matches
// the reference outputs within 2e-5.
//
// Entry points:
//   - LogMelPadded(audio, nMels): transcribe()'s spectrogram (audio plus 30
//     s of zeros); cut windows with Segment(seek, size).
//   - LogMel(audio, nMels, padding): log_mel_spectrogram with any padding.
//   - Window(audio, nMels): one 30 s window on its own (pad_or_trim first).
//   - Framer + Normalize: the same frames from audio streamed in pieces,
//     for recordings too long to hold (see Framer).
//
// The mel filters are computed (NewFilters), not loaded: they equal
// OpenAI's mel_filters.npz to 4e-9. ReadNPY/ReadNPZ read NumPy files.
package mel

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Whisper's fixed front-end constants (whisper/audio.py).
const (
	SampleRate = 16000
	NFFT       = 400
	HopLength  = 160
	// NSamples is one 30 s window of audio; NFrames its mel frames.
	NSamples = 30 * SampleRate
	NFrames  = NSamples / HopLength
)

// Spectrogram is a log-mel spectrogram laid out as Whisper's tensor
// (n_mels, n_frames): Data[m*NFrames+t] is mel band m of frame t.
type Spectrogram struct {
	NMels   int
	NFrames int
	Data    []float32
}

// At returns band m of frame t.
func (s *Spectrogram) At(m, t int) float32 { return s.Data[m*s.NFrames+t] }

// hann is torch.hann_window(400) (periodic) bit for bit: torch builds it in
// float32 as 0.5 - 0.5*cos(n * float32(2*pi/400)), and matching those
// roundings keeps us within float32 noise of the reference.
var hann = func() []float64 {
	step := float32(2 * math.Pi / NFFT)
	w := make([]float64, NFFT)
	for n := range w {
		x := float32(n) * step
		c := float32(math.Cos(float64(x)))
		w[n] = float64(c*-0.5 + 0.5)
	}
	return w
}()

// LogMel is whisper.audio.log_mel_spectrogram(audio, n_mels, padding): the
// audio (16 kHz mono) is first right-padded with padding zeros. The result
// has (len(audio)+padding)/160 frames. nMels is 80 or 128 for the released
// models; any count from 1 to 512 works.
func LogMel(audio []float32, nMels, padding int) (*Spectrogram, error) {
	fb, err := cachedFilters(nMels)
	if err != nil {
		return nil, err
	}
	return LogMelWith(fb, audio, padding)
}

// LogMelPadded is the spectrogram transcribe() works on: the whole audio
// followed by 30 s of silence. Cut it into windows with Segment.
func LogMelPadded(audio []float32, nMels int) (*Spectrogram, error) {
	return LogMel(audio, nMels, NSamples)
}

// Window is the log-mel of one 30 s window on its own, as whisper computes
// it for a single clip: log_mel_spectrogram(pad_or_trim(audio)). Audio
// shorter than 30 s is padded with zeros, longer is cut. It always has
// NFrames frames. Streaming callers use it window by window; note that the
// max-8 floor is then taken per window, not over the whole recording.
func Window(audio []float32, nMels int) (*Spectrogram, error) {
	if len(audio) > NSamples {
		audio = audio[:NSamples]
	}
	return LogMel(audio, nMels, NSamples-len(audio))
}

// LogMelWith is LogMel with a given filter bank (for example one read from
// mel_filters.npz).
func LogMelWith(fb *Filters, audio []float32, padding int) (*Spectrogram, error) {
	if padding < 0 {
		return nil, fmt.Errorf("mel: negative padding %d", padding)
	}
	n := len(audio) + padding
	if n <= NFFT/2 {
		// torch.stft's reflect padding needs more than n_fft/2 samples.
		return nil, fmt.Errorf("mel: %d samples is too short for a spectrogram (need more than %d)", n, NFFT/2)
	}
	frames := n / HopLength
	out := &Spectrogram{NMels: fb.NMels, NFrames: frames, Data: make([]float32, fb.NMels*frames)}
	// Frames are independent, so blocks of them are spread over the
	// cores; each block is written out band by band so the stores into the
	// (mel, frame) layout stay sequential. The result does not depend on
	// the number of workers.
	nBlocks := (frames + melBlock - 1) / melBlock
	workers := max(1, min(runtime.GOMAXPROCS(0), nBlocks))
	maxes := make([]float64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			maxes[w], errs[w] = logMelBlocks(fb, audio, n, out, w, workers)
		}()
	}
	wg.Wait()
	logMax := math.Inf(-1)
	for w := range workers {
		if errs[w] != nil {
			return nil, errs[w]
		}
		logMax = max(logMax, maxes[w])
	}
	floor := float32(logMax - 8)
	for i, v := range out.Data {
		out.Data[i] = (max(v, floor) + 4) / 4
	}
	return out, nil
}

// melBlock is how many frames a worker computes before writing them out.
const melBlock = 64

// logMelBlocks computes the raw log10 mel values of every workers-th block
// of frames, starting with block first, into out, and returns their max.
func logMelBlocks(fb *Filters, audio []float32, n int, out *Spectrogram, first, workers int) (float64, error) {
	st, err := newSTFT()
	if err != nil {
		return 0, err
	}
	frames := out.NFrames
	melE := make([]float64, fb.NMels)
	tmp := make([]float32, melBlock*fb.NMels)
	logMax := math.Inf(-1)
	for t0 := first * melBlock; t0 < frames; t0 += workers * melBlock {
		nb := min(melBlock, frames-t0)
		for j := range nb {
			fb.apply(melE, st.frame(audio, n, t0+j))
			for m, e := range melE {
				v := math.Log10(max(e, 1e-10))
				logMax = max(logMax, v)
				tmp[m*melBlock+j] = float32(v)
			}
		}
		for m := range fb.NMels {
			copy(out.Data[m*frames+t0:m*frames+t0+nb], tmp[m*melBlock:m*melBlock+nb])
		}
	}
	return logMax, nil
}

// PowerSpectrum returns |STFT|^2 of the (padded) audio as a 201 x frames
// row-major array: the intermediate before the mel filters.
func PowerSpectrum(audio []float32, padding int) ([]float32, int, error) {
	n := len(audio) + padding
	if padding < 0 || n <= NFFT/2 {
		return nil, 0, fmt.Errorf("mel: %d samples is too short for a spectrogram", n)
	}
	frames := n / HopLength
	st, err := newSTFT()
	if err != nil {
		return nil, 0, err
	}
	out := make([]float32, Bins*frames)
	for t := range frames {
		for k, v := range st.frame(audio, n, t) {
			out[k*frames+t] = float32(v)
		}
	}
	return out, frames, nil
}

// stft computes one windowed frame's power spectrum at a time.
type stft struct {
	fft   *realFFT
	buf   []float64
	power []float64
}

func newSTFT() (*stft, error) {
	f, err := newRealFFT(NFFT)
	if err != nil {
		return nil, err
	}
	return &stft{fft: f, buf: make([]float64, NFFT), power: make([]float64, Bins)}, nil
}

// frame returns the power spectrum of frame t of audio zero-padded to n
// samples and reflect-padded by NFFT/2 on both sides (center=True).
func (s *stft) frame(audio []float32, n, t int) []float64 {
	start := t*HopLength - NFFT/2
	for j := range NFFT {
		i := start + j
		if i < 0 {
			i = -i
		} else if i >= n {
			i = 2*(n-1) - i
		}
		var v float64
		if i < len(audio) {
			v = float64(audio[i])
		}
		s.buf[j] = v * hann[j]
	}
	s.fft.power(s.power, s.buf)
	return s.power
}

// Segment returns frames [seek, seek+size) of s padded with zeros (or cut)
// to NFrames, as transcribe() builds each window:
// pad_or_trim(mel[:, seek:seek+size], N_FRAMES). The zeros are 0.0 in the
// log-mel domain, not the floor value.
func (s *Spectrogram) Segment(seek, size int) *Spectrogram {
	out := &Spectrogram{NMels: s.NMels, NFrames: NFrames, Data: make([]float32, s.NMels*NFrames)}
	seek = max(seek, 0)
	end := min(seek+max(size, 0), s.NFrames, seek+NFrames)
	if end <= seek {
		return out
	}
	for m := range s.NMels {
		copy(out.Data[m*NFrames:], s.Data[m*s.NFrames+seek:m*s.NFrames+end])
	}
	return out
}
