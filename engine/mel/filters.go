package mel

import (
	"fmt"
	"math"
	"sync"
)

// Filters is a mel filter bank over the NFFT/2+1 = 201 power-spectrum bins.
// Each filter is a triangle, so only its non-zero span is stored.
type Filters struct {
	NMels int
	// Dense is the full NMels x Bins matrix, row-major, as float32 (the
	// precision of OpenAI's mel_filters.npz).
	Dense []float32
	start []int       // first non-zero bin of each filter
	w     [][]float32 // the non-zero weights
}

// Bins is the number of one-sided FFT bins for NFFT.
const Bins = NFFT/2 + 1

// Slaney's mel scale, as librosa implements it with htk=False: linear below
// 1 kHz (3 mels per 200 Hz), logarithmic above (27 steps per factor 6.4).
const (
	melLinearHz  = 200.0 / 3
	melBreakHz   = 1000.0
	melBreakMels = melBreakHz / melLinearHz
)

var melLogStep = math.Log(6.4) / 27

func hzToMel(f float64) float64 {
	if f < melBreakHz {
		return f / melLinearHz
	}
	return melBreakMels + math.Log(f/melBreakHz)/melLogStep
}

func melToHz(m float64) float64 {
	if m < melBreakMels {
		return m * melLinearHz
	}
	return melBreakHz * math.Exp(melLogStep*(m-melBreakMels))
}

// NewFilters computes the bank Whisper uses (librosa.filters.mel with
// sr=16000, n_fft=400, fmin=0, fmax=8000, Slaney scale and Slaney area
// normalisation) in float64 and rounds it to float32. It equals the
// mel_80 / mel_128 arrays of OpenAI's mel_filters.npz, so the app needs no
// data file.
func NewFilters(nMels int) (*Filters, error) {
	if nMels < 1 || nMels > 512 {
		return nil, fmt.Errorf("mel: %d mel bands is out of range", nMels)
	}
	// Band edges: nMels+2 points evenly spaced in mel from 0 Hz to Nyquist.
	lo, hi := hzToMel(0), hzToMel(SampleRate/2)
	edges := make([]float64, nMels+2)
	for i := range edges {
		edges[i] = melToHz(lo + (hi-lo)*float64(i)/float64(nMels+1))
	}
	fb := &Filters{NMels: nMels, Dense: make([]float32, nMels*Bins)}
	for m := range nMels {
		l, c, r := edges[m], edges[m+1], edges[m+2]
		norm := 2 / (r - l) // equal area per filter
		for k := range Bins {
			f := float64(k) * SampleRate / NFFT
			up := (f - l) / (c - l)
			down := (r - f) / (r - c)
			v := math.Max(0, math.Min(up, down))
			fb.Dense[m*Bins+k] = float32(v * norm)
		}
	}
	fb.index()
	return fb, nil
}

// FiltersFromDense wraps an NMels x 201 matrix, e.g. read from
// mel_filters.npz.
func FiltersFromDense(nMels int, dense []float32) (*Filters, error) {
	if len(dense) != nMels*Bins {
		return nil, fmt.Errorf("mel: filter matrix has %d values, want %d x %d", len(dense), nMels, Bins)
	}
	fb := &Filters{NMels: nMels, Dense: append([]float32(nil), dense...)}
	fb.index()
	return fb, nil
}

// index finds each filter's non-zero span.
func (fb *Filters) index() {
	fb.start = make([]int, fb.NMels)
	fb.w = make([][]float32, fb.NMels)
	for m := range fb.NMels {
		row := fb.Dense[m*Bins : (m+1)*Bins]
		a, b := 0, Bins
		for a < b && row[a] == 0 {
			a++
		}
		for b > a && row[b-1] == 0 {
			b--
		}
		fb.start[m], fb.w[m] = a, row[a:b]
	}
}

// apply computes the mel energies of one power spectrum.
func (fb *Filters) apply(dst []float64, power []float64) {
	for m, w := range fb.w {
		p := power[fb.start[m]:]
		var s float64
		for k, v := range w {
			s += float64(v) * p[k]
		}
		dst[m] = s
	}
}

var (
	filterMu    sync.Mutex
	filterCache = map[int]*Filters{}
)

// cachedFilters returns the computed bank for nMels, built once.
func cachedFilters(nMels int) (*Filters, error) {
	filterMu.Lock()
	defer filterMu.Unlock()
	if fb := filterCache[nMels]; fb != nil {
		return fb, nil
	}
	fb, err := NewFilters(nMels)
	if err != nil {
		return nil, err
	}
	filterCache[nMels] = fb
	return fb, nil
}
