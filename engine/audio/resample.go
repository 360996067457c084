package audio

import "math"

// Resampler design. A Kaiser-windowed sinc evaluated on a polyphase grid:
// output sample n sits at input time n*M/L, where L/M is the rate ratio in
// lowest terms, so only L distinct filter phases exist and each is computed
// once. The cutoff sits a little under the lower of the two Nyquist rates so
// the transition band ends before aliasing starts.
const (
	resampleZeros   = 32   // sinc zero crossings kept on each side of the centre
	resampleRolloff = 0.92 // cutoff as a fraction of the lower Nyquist rate
	resampleBeta    = 8.6  // Kaiser beta: about 86 dB of stopband attenuation
	// maxPhaseTable caps the precomputed table (phases x taps floats). Odd
	// rate pairs with a huge L compute their coefficients per output sample.
	maxPhaseTable = 1 << 20
)

// resampler converts a mono stream from one rate to another, chunk by chunk.
// It holds only a filter's width of input, so memory does not grow with
// the length of the stream.
type resampler struct {
	l, m   int64   // output/input = l/m in lowest terms
	half   int     // filter half-width in input samples
	fc     float64 // cutoff in cycles per input sample
	i0beta float64
	table  []float32 // l phases of 2*half taps, or nil
	coef   []float32 // scratch for the slow path

	buf  []float32 // input samples; buf[0] is input index base
	base int64
	in   int64 // input samples pushed (without the flush padding)
	n    int64 // next output index
	done bool
}

func newResampler(inRate, outRate int) *resampler {
	g := gcd(inRate, outRate)
	r := &resampler{l: int64(outRate / g), m: int64(inRate / g)}
	r.fc = 0.5 * resampleRolloff * math.Min(1, float64(r.l)/float64(r.m))
	r.half = int(math.Ceil(resampleZeros / (2 * r.fc)))
	r.i0beta = besselI0(resampleBeta)
	taps := 2 * r.half
	if r.l*int64(taps) <= maxPhaseTable {
		r.table = make([]float32, int(r.l)*taps)
		for p := range int(r.l) {
			r.fill(r.table[p*taps:(p+1)*taps], p)
		}
	} else {
		r.coef = make([]float32, taps)
	}
	// Samples before the start are silence: pre-load half-1 zeros so the
	// first outputs see a full window.
	r.buf = make([]float32, r.half-1, 4096)
	r.base = -int64(r.half - 1)
	return r
}

// fill writes the taps for phase p: coefficient j multiplies input sample
// c-half+1+j for an output at input time c + p/l.
func (r *resampler) fill(dst []float32, p int) {
	frac := float64(p) / float64(r.l)
	for j := range dst {
		t := frac + float64(r.half-1-j)
		dst[j] = float32(r.kernel(t))
	}
}

// kernel is the windowed sinc at t input samples from the output instant.
func (r *resampler) kernel(t float64) float64 {
	x := t / float64(r.half)
	if x <= -1 || x >= 1 {
		return 0
	}
	w := besselI0(resampleBeta*math.Sqrt(1-x*x)) / r.i0beta
	a := 2 * r.fc * t
	s := 1.0
	if a != 0 {
		s = math.Sin(math.Pi*a) / (math.Pi * a)
	}
	return 2 * r.fc * s * w
}

// push appends input samples.
func (r *resampler) push(in []float32) {
	r.buf = append(r.buf, in...)
	r.in += int64(len(in))
}

// finish marks the end of input: the tail is padded with silence so the
// last outputs can be computed.
func (r *resampler) finish() {
	if !r.done {
		r.done = true
		r.buf = append(r.buf, make([]float32, r.half+1)...)
	}
}

// pull appends every output sample that can be computed now to out.
func (r *resampler) pull(out []float32) []float32 {
	taps := 2 * r.half
	end := r.base + int64(len(r.buf)) // one past the last input sample held
	for {
		if r.done && r.n*r.m >= r.in*r.l {
			break // ceil(in*l/m) outputs in all
		}
		pos := r.n * r.m
		c := pos / r.l
		if c+int64(r.half) >= end {
			break
		}
		p := int(pos % r.l)
		var h []float32
		if r.table != nil {
			h = r.table[p*taps : (p+1)*taps]
		} else {
			r.fill(r.coef, p)
			h = r.coef
		}
		start := int(c - int64(r.half) + 1 - r.base)
		out = append(out, dot(h, r.buf[start:start+taps]))
		r.n++
	}
	r.compact()
	return out
}

// compact drops input no future output can reach.
func (r *resampler) compact() {
	c := r.n * r.m / r.l
	keep := c - int64(r.half) + 1 - r.base
	if keep <= 0 || keep < int64(len(r.buf))/2 && keep < 1<<16 {
		return
	}
	keep = min(keep, int64(len(r.buf)))
	n := copy(r.buf, r.buf[keep:])
	r.buf = r.buf[:n]
	r.base += keep
}

// dot is the filter's inner product. Four float32 partial sums keep the
// loop short and are plenty for audio (error far below -100 dB).
func dot(h, x []float32) float32 {
	x = x[:len(h)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(h); i += 4 {
		s0 += h[i] * x[i]
		s1 += h[i+1] * x[i+1]
		s2 += h[i+2] * x[i+2]
		s3 += h[i+3] * x[i+3]
	}
	for ; i < len(h); i++ {
		s0 += h[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series (converges fast for the arguments a Kaiser window uses).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 200; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
