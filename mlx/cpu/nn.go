package cpu

import (
	"math"
	"sync/atomic"

	"hark/mlx"
)

func (cpuBackend) Softmax(x *mlx.Array, axis int, lse bool, out *mlx.Array) {
	f := f32Of(x)
	d := x.Dims()[axis]
	rows := len(f) / max(d, 1)
	var r []float32
	if lse {
		r = newF32(rows)
	} else {
		r = newF32(len(f))
	}
	parallelFor(rows, d*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := f[i*d : (i+1)*d]
			if lse {
				r[i] = float32(logSumExpRow(row))
			} else {
				softmaxRow(r[i*d:(i+1)*d], row)
			}
		}
	})
	setPooledF32(out, r)
}

func rowMax(row []float32) float64 {
	m := math.Inf(-1)
	for _, v := range row {
		if float64(v) > m {
			m = float64(v)
		} else if v != v {
			return math.NaN()
		}
	}
	return m
}

// softmaxRow writes the softmax of row into dst. A row of all -Inf gives
// zeros rather than NaN.
func softmaxRow(dst, row []float32) {
	m := rowMax(row)
	if math.IsInf(m, -1) {
		clear(dst)
		return
	}
	s := 0.0
	for j, v := range row {
		e := expFast(float64(v) - m)
		dst[j] = float32(e)
		s += e
	}
	inv := 1 / s
	for j := range dst {
		dst[j] = float32(float64(dst[j]) * inv)
	}
}

func logSumExpRow(row []float32) float64 {
	m := rowMax(row)
	if math.IsInf(m, 0) || m != m {
		return m
	}
	s := 0.0
	for _, v := range row {
		s += expFast(float64(v) - m)
	}
	return m + math.Log(s)
}

func (cpuBackend) RMSNorm(x, w *mlx.Array, eps float32, out *mlx.Array) {
	f := f32Of(x)
	var wf []float32
	if w != nil {
		wf = f32Of(w)
	}
	d := x.Dims()[len(x.Dims())-1]
	rows := len(f) / max(d, 1)
	r := newF32(len(f))
	dt := x.DType()
	if dt == mlx.Float32 && rows*d < 1<<15 && rmsNormRowsF32(f, wf, r, d, eps) {
		// Decode-sized: one C call, vectorised (the f16/bf16 rounding
		// below only matters for half inputs).
		setPooledF32(out, r)
		return
	}
	parallelFor(rows, d*2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, o := f[i*d:(i+1)*d], r[i*d:(i+1)*d]
			ss := 0.0
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			inv := float32(1 / math.Sqrt(ss/float64(d)+float64(eps)))
			for j, v := range row {
				// MLX rounds the normalised value to the input dtype
				// before applying the weight.
				n := roundTo(dt, v*inv)
				if wf != nil {
					n *= wf[j]
				}
				o[j] = n
			}
		}
	})
	setPooledF32(out, r)
}

func (cpuBackend) LayerNorm(x, w, b *mlx.Array, eps float32, out *mlx.Array) {
	f := f32Of(x)
	var wf, bf []float32
	if w != nil {
		wf = f32Of(w)
	}
	if b != nil {
		bf = f32Of(b)
	}
	d := x.Dims()[len(x.Dims())-1]
	rows := len(f) / max(d, 1)
	r := newF32(len(f))
	dt := x.DType()
	parallelFor(rows, d*3, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, o := f[i*d:(i+1)*d], r[i*d:(i+1)*d]
			mean := 0.0
			for _, v := range row {
				mean += float64(v)
			}
			mean /= float64(d)
			vs := 0.0
			for _, v := range row {
				dv := float64(v) - mean
				vs += dv * dv
			}
			inv := 1 / math.Sqrt(vs/float64(d)+float64(eps))
			for j, v := range row {
				n := roundTo(dt, float32((float64(v)-mean)*inv))
				if wf != nil {
					n *= wf[j]
				}
				if bf != nil {
					n += bf[j]
				}
				o[j] = n
			}
		}
	})
	setPooledF32(out, r)
}

// lastRoPE keeps the most recent cos/sin table made from Base: all the
// layers of a decode step rotate the same positions with the same
// frequencies, so one table serves the queries and keys of every layer.
var lastRoPE atomic.Pointer[ropeEntry]

// ropeEntry is one table and what it was made for; never written once
// stored.
type ropeEntry struct {
	key ropeKey
	cs  []float32
}

type ropeKey struct {
	dims, offset, l int
	base, scale     float32
}

// ropeTable is the angle table [l][half] of (cos, sin) pairs, shared by
// every head and batch row.
func ropeTable(p mlx.RoPEParams, l int, freqs *mlx.Array) []float32 {
	key := ropeKey{p.Dims, p.Offset, l, p.Base, p.Scale}
	if e := lastRoPE.Load(); freqs == nil && e != nil && e.key == key {
		return e.cs
	}
	half := p.Dims / 2
	inv := make([]float64, half)
	if freqs != nil {
		for i, v := range f32Of(freqs) {
			inv[i] = 1 / float64(v)
		}
	} else {
		lb := math.Log(float64(p.Base))
		for i := range inv {
			inv[i] = math.Exp(-float64(2*i) / float64(p.Dims) * lb)
		}
	}
	cs := make([]float32, 2*l*half)
	for t := 0; t < l; t++ {
		pos := float64(p.Scale) * float64(p.Offset+t)
		for i := 0; i < half; i++ {
			s, c := math.Sincos(pos * inv[i])
			cs[2*(t*half+i)] = float32(c)
			cs[2*(t*half+i)+1] = float32(s)
		}
	}
	if freqs == nil {
		lastRoPE.Store(&ropeEntry{key, cs})
	}
	return cs
}

func (cpuBackend) RoPE(x *mlx.Array, p mlx.RoPEParams, freqs *mlx.Array, out *mlx.Array) {
	f := f32Of(x)
	d := x.Dims()[len(x.Dims())-1]
	l := x.Dims()[len(x.Dims())-2]
	cs := ropeTable(p, l, freqs)
	rows := len(f) / max(d, 1)
	r := newF32(len(f))
	if serial(rows, d*4) { // decode: no closure to allocate
		ropeRows(f, r, cs, d, l, p, 0, rows)
	} else {
		parallelFor(rows, d*4, func(lo, hi int) { ropeRows(f, r, cs, d, l, p, lo, hi) })
	}
	setPooledF32(out, r)
}

// ropeRows rotates rows [lo, hi) of f (rows of d values, l positions per
// sequence) into r with the cos/sin table cs.
func ropeRows(f, r, cs []float32, d, l int, p mlx.RoPEParams, lo, hi int) {
	half, ms := p.Dims/2, p.MScale
	for i := lo; i < hi; i++ {
		row, o := f[i*d:(i+1)*d], r[i*d:(i+1)*d]
		tab := cs[2*(i%l)*half:]
		for j := 0; j < half; j++ {
			c, s := tab[2*j], tab[2*j+1]
			a, b := 2*j, 2*j+1
			if !p.Traditional {
				a, b = j, j+half
			}
			x1, x2 := row[a]*ms, row[b]*ms
			o[a] = x1*c - x2*s
			o[b] = x1*s + x2*c
		}
		copy(o[p.Dims:], row[p.Dims:])
	}
}
