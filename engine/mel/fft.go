package mel

import (
	"fmt"
	"math"
	"math/cmplx"
)

// fftPlan is a mixed-radix Stockham FFT for one size. Whisper's 400-point
// real transform becomes a 200-point complex one (200 = 2*2*2*5*5), which
// a power-of-two FFT cannot do and a direct DFT would do 40x slower.
type fftPlan struct {
	n       int
	factors []int
	tw      [][]complex128 // per stage: exp(-2 pi i q r / len) for q < len/p, r < p
	roots   map[int][]complex128
	work    []complex128
	scratch []complex128 // one butterfly's inputs, for the generic radix
}

func newFFTPlan(n int) (*fftPlan, error) {
	p := &fftPlan{n: n, roots: map[int][]complex128{}, work: make([]complex128, n)}
	rest := n
	for _, f := range []int{4, 2, 3, 5} {
		for rest%f == 0 {
			p.factors = append(p.factors, f)
			rest /= f
		}
	}
	for f := 7; rest > 1; f += 2 {
		for rest%f == 0 {
			p.factors = append(p.factors, f)
			rest /= f
		}
	}
	length := n
	for _, f := range p.factors {
		if f > len(p.scratch) {
			p.scratch = make([]complex128, f)
		}
		m := length / f
		t := make([]complex128, m*f)
		for q := range m {
			for r := range f {
				t[q*f+r] = cmplx.Rect(1, -2*math.Pi*float64(q*r)/float64(length))
			}
		}
		p.tw = append(p.tw, t)
		if p.roots[f] == nil {
			rt := make([]complex128, f)
			for k := range f {
				rt[k] = cmplx.Rect(1, -2*math.Pi*float64(k)/float64(f))
			}
			p.roots[f] = rt
		}
		length = m
	}
	if n < 1 {
		return nil, fmt.Errorf("fft: size %d", n)
	}
	return p, nil
}

// transform computes the forward DFT of x in place (no scaling).
func (p *fftPlan) transform(x []complex128) {
	src, dst := x, p.work
	length, stride := p.n, 1
	a := p.scratch
	for si, f := range p.factors {
		m := length / f
		tw := p.tw[si]
		rt := p.roots[f]
		for q := range m {
			w := tw[q*f : q*f+f]
			for s := range stride {
				switch f {
				case 2:
					a0, a1 := src[s+stride*q], src[s+stride*(q+m)]
					dst[s+stride*(2*q)] = a0 + a1
					dst[s+stride*(2*q+1)] = (a0 - a1) * w[1]
				case 4:
					a0, a1 := src[s+stride*q], src[s+stride*(q+m)]
					a2, a3 := src[s+stride*(q+2*m)], src[s+stride*(q+3*m)]
					t0, t1 := a0+a2, a0-a2
					t2, t3 := a1+a3, a1-a3
					t3 = complex(imag(t3), -real(t3)) // times -i
					dst[s+stride*(4*q)] = t0 + t2
					dst[s+stride*(4*q+1)] = (t1 + t3) * w[1]
					dst[s+stride*(4*q+2)] = (t0 - t2) * w[2]
					dst[s+stride*(4*q+3)] = (t1 - t3) * w[3]
				case 5:
					a0, a1, a2 := src[s+stride*q], src[s+stride*(q+m)], src[s+stride*(q+2*m)]
					a3, a4 := src[s+stride*(q+3*m)], src[s+stride*(q+4*m)]
					t1, t2, t3, t4 := a1+a4, a2+a3, a1-a4, a2-a3
					b1 := a0 + complex(c51, 0)*t1 + complex(c52, 0)*t2
					b2 := a0 + complex(c52, 0)*t1 + complex(c51, 0)*t2
					e1 := complex(s51, 0)*t3 + complex(s52, 0)*t4
					e2 := complex(s52, 0)*t3 - complex(s51, 0)*t4
					d1 := complex(imag(e1), -real(e1)) // -i * e1
					d2 := complex(imag(e2), -real(e2))
					dst[s+stride*(5*q)] = a0 + t1 + t2
					dst[s+stride*(5*q+1)] = (b1 + d1) * w[1]
					dst[s+stride*(5*q+2)] = (b2 + d2) * w[2]
					dst[s+stride*(5*q+3)] = (b2 - d2) * w[3]
					dst[s+stride*(5*q+4)] = (b1 - d1) * w[4]
				default:
					for k := range f {
						a[k] = src[s+stride*(q+k*m)]
					}
					for r := range f {
						var sum complex128
						for k := range f {
							sum += a[k] * rt[(k*r)%f]
						}
						dst[s+stride*(f*q+r)] = sum * w[r]
					}
				}
			}
		}
		src, dst = dst, src
		length, stride = m, stride*f
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

// Radix-5 butterfly constants: cos and sin of 2*pi/5 and 4*pi/5.
var (
	c51 = math.Cos(2 * math.Pi / 5)
	c52 = math.Cos(4 * math.Pi / 5)
	s51 = math.Sin(2 * math.Pi / 5)
	s52 = math.Sin(4 * math.Pi / 5)
)

// realFFT computes the one-sided spectrum of a real signal of even length
// n through one complex FFT of length n/2.
type realFFT struct {
	n    int
	half *fftPlan
	z    []complex128
	w    []complex128 // exp(-2 pi i k / n), k <= n/2
}

func newRealFFT(n int) (*realFFT, error) {
	if n%2 != 0 {
		return nil, fmt.Errorf("fft: real transform needs an even size, got %d", n)
	}
	h, err := newFFTPlan(n / 2)
	if err != nil {
		return nil, err
	}
	r := &realFFT{n: n, half: h, z: make([]complex128, n/2), w: make([]complex128, n/2+1)}
	for k := range r.w {
		r.w[k] = cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n))
	}
	return r, nil
}

// power writes |X[k]|^2 for k = 0..n/2 of the real input x (len n).
func (r *realFFT) power(dst []float64, x []float64) {
	m := r.n / 2
	for i := range m {
		r.z[i] = complex(x[2*i], x[2*i+1])
	}
	r.half.transform(r.z)
	// Even and odd samples' spectra are the conjugate-symmetric and
	// anti-symmetric parts of Z; X[k] = E[k] + W^k O[k].
	for k := 0; k <= m; k++ {
		zk, zc := r.z[k%m], cmplx.Conj(r.z[(m-k)%m])
		e := (zk + zc) * 0.5
		o := (zk - zc) * complex(0, -0.5)
		v := e + r.w[k]*o
		dst[k] = real(v)*real(v) + imag(v)*imag(v)
	}
}
