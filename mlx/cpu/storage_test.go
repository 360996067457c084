package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"hark/mlx"
)

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// A recycled buffer is zeroed, and one still held by a view is never
// handed to another op.
func TestPooledStorage(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(1, 1))
	n := 5000 // pooled, in the class of 5120 floats
	x, y := mlx.FromSlice(randF32(r, n), n), mlx.FromSlice(randF32(r, n), n)
	defer mlx.Free(x, y)
	sum := mlx.Add(x, y)
	if b := sum.Storage().(*cpuBuf); !b.pooled || cap(b.data.([]float32)) != 5120 {
		t.Fatalf("Add's output is not pooled storage (pooled=%v)", b.pooled)
	}
	want := sum.Float32s()
	view := mlx.Reshape(sum, 50, 100)
	sum.Free() // the view still holds the storage
	for range 20 {
		mlx.Mul(x, y).Free() // same size class: would reuse a released buffer
	}
	got := view.Float32s()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("view lost its data at %d: %v, want %v", i, got[i], want[i])
		}
	}
	view.Free()
	for range 20 {
		s := newF32(n)
		for i, v := range s {
			if v != 0 {
				t.Fatalf("recycled buffer not zeroed at %d: %v", i, v)
			}
		}
		s[0] = 1
		putF32(s)
	}
	putF32(make([]float32, 3000)) // not from newF32: ignored, no panic
}

// Size classes: four per power of two, each one's capacity the smallest
// that holds n, at most a quarter more than n, with distinct indices.
func TestF32Classes(t *testing.T) {
	prevIdx, prevSize := -1, 0
	for n := 1; n <= 1<<maxPooledClass; n += 1 + n/97 {
		idx, size := f32Class(n)
		if n <= 1<<(minPooledClass-1) {
			if idx != -1 {
				t.Fatalf("n=%d: pooled (index %d), want unpooled", n, idx)
			}
			continue
		}
		if size < n || float64(size) > 1.25*float64(n)+1 {
			t.Fatalf("n=%d: class size %d", n, size)
		}
		if idx < prevIdx || (idx == prevIdx) != (size == prevSize) {
			t.Fatalf("n=%d: class %d size %d after class %d size %d", n, idx, size, prevIdx, prevSize)
		}
		if i2, s2 := f32Class(size); i2 != idx || s2 != size {
			t.Fatalf("class size %d maps to class %d size %d, want %d", size, i2, s2, idx)
		}
		prevIdx, prevSize = idx, size
	}
	if idx, _ := f32Class(1<<maxPooledClass + 1); idx != -1 {
		t.Fatalf("above the largest class: index %d", idx)
	}
}

// Linear adds its bias in the matmul's own buffer and gets Add's values
// bit for bit; a bias in half precision is widened first.
func TestLinearBiasInPlace(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(2, 2))
	for _, dt := range []mlx.DType{mlx.Float32, mlx.Float16} {
		x := mlx.FromSlice(randF32(r, 7*24), 7, 24)
		w := mlx.FromSlice(randF32(r, 40*24), 40, 24)
		b32 := mlx.FromSlice(randF32(r, 40), 40)
		b := mlx.AsType(b32, dt)
		got := mlx.Linear(x, w, b)
		y := mlx.MatmulT(x, w)
		want := mlx.Add(y, b)
		if got.DType() != want.DType() {
			t.Fatalf("%v bias: dtype %v, want %v", dt, got.DType(), want.DType())
		}
		g, wv := got.Float32s(), want.Float32s()
		for i := range wv {
			if g[i] != wv[i] {
				t.Fatalf("%v bias: [%d] = %v, want %v", dt, i, g[i], wv[i])
			}
		}
		fresh := mlx.MatmulT(x, w)
		if !(cpuBackend{}).AddBiasInPlace(fresh, b) {
			t.Fatalf("%v bias: a fresh matmul output was not added to in place", dt)
		}
		fresh.Free()
		// A buffer another array shares is left alone.
		view := mlx.Reshape(y, 40, 7)
		if (cpuBackend{}).AddBiasInPlace(y, b) {
			t.Fatalf("added in place into a buffer a view shares")
		}
		mlx.Free(x, w, b32, b, got, y, want, view)
	}
}

// Resident storage lives outside the Go heap, computes like any other and
// is unmapped only when the last view goes.
func TestResident(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	r := rand.New(rand.NewPCG(2, 2))
	vals := randF32(r, 64<<10)
	w := mlx.Resident(mlx.FromSlice(vals, 256, 256))
	if d, _ := mapAnon(1); d != nil && w.Storage().(*cpuBuf).mapped == nil {
		t.Fatal("a 256 KB array was not moved off the heap")
	}
	x := mlx.FromSlice(randF32(r, 256), 1, 256)
	defer x.Free()
	heap := mlx.FromSlice(vals, 256, 256)
	got, want := mlx.Matmul(x, w), mlx.Matmul(x, heap)
	if d := maxDiff(got.Float32s(), want.Float32s()); d != 0 {
		t.Fatalf("resident weights compute differently: %g", d)
	}
	mlx.Free(got, want, heap)
	view := mlx.Reshape(w, 65536)
	b := w.Storage().(*cpuBuf)
	w.Free()
	if v := view.Float32s(); v[12345] != vals[12345] {
		t.Fatalf("view of freed resident array reads %v, want %v", v[12345], vals[12345])
	}
	view.Free()
	if b.mapped != nil || b.data != nil {
		t.Fatal("resident storage still mapped after its last view was freed")
	}
	// An op's pooled output moves too, with its values, and its heap
	// buffer is no longer the array's.
	src := mlx.FromSlice(vals, 256, 256)
	big := mlx.Add(src, src)
	src.Free()
	before := big.Float32s()
	pooled := cb(big).data.([]float32)
	mlx.Resident(big)
	if d, _ := mapAnon(1); d != nil {
		nb := big.Storage().(*cpuBuf)
		if nb.mapped == nil || nb.pooled || &nb.data.([]float32)[0] == &pooled[0] {
			t.Fatal("a pooled 256 KB op output was not moved off the heap")
		}
	}
	if d := maxDiff(big.Float32s(), before); d != 0 {
		t.Fatalf("moved op output changed by %g", d)
	}
	big.Free()
	small := mlx.Resident(mlx.FromSlice([]float32{1, 2, 3}, 3)) // below the threshold: stays
	if small.Storage().(*cpuBuf).mapped != nil {
		t.Fatal("a 12-byte array was mapped")
	}
	small.Free()
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// The float32 C rows agree with the float64 Go loops they replace.
func TestFastRowsMatchFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 7, 8, 33, 256, 1000} {
		row := randF32(r, n)
		for i := range row {
			row[i] *= 8
		}
		if n > 5 {
			row[3] = float32(math.Inf(-1)) // a masked key
		}
		got, want := make([]float32, n), make([]float32, n)
		softmaxRowF32(got, row)
		softmaxRow(want, row)
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6*float64(want[i])+1e-7 {
				t.Fatalf("softmax n=%d [%d]: %g, want %g", n, i, got[i], want[i])
			}
		}
	}
	// NaN and +Inf rows take the float64 path.
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		row := []float32{1, bad, 2}
		got, want := make([]float32, 3), make([]float32, 3)
		softmaxRowF32(got, row)
		softmaxRow(want, row)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("softmax with %v: %v, want %v", bad, got, want)
			}
		}
	}
	for _, d := range []int{5, 64, 896} {
		x, w := randF32(r, 3*d), randF32(r, d)
		got := make([]float32, 3*d)
		if !rmsNormRowsF32(x, w, got, d, 1e-6) {
			t.Skip("cgo is off: the C RMSNorm this compares against Go is not built")
		}
		for i := range 3 {
			row := x[i*d : (i+1)*d]
			ss := 0.0
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(d)+1e-6)
			for j, v := range row {
				want := float64(float32(float64(v)*inv)) * float64(w[j])
				if g := float64(got[i*d+j]); math.Abs(g-want) > 1e-6*math.Abs(want)+1e-7 {
					t.Fatalf("rmsnorm d=%d [%d,%d]: %g, want %g", d, i, j, g, want)
				}
			}
		}
	}
}

func checkNoLeaks(t *testing.T, before int) {
	if n := mlx.LiveArrays(); n != before {
		t.Errorf("%d arrays leaked", n-before)
	}
}

// A contiguous view is read in place, keeps its source's storage alive,
// and is copied before anything writes to it.
func TestContiguousViewsAreWindows(t *testing.T) {
	defer checkNoLeaks(t, mlx.LiveArrays())
	vals := make([]float32, 24)
	for i := range vals {
		vals[i] = float32(i)
	}
	x := mlx.FromSlice(vals, 1, 2, 12)
	part := mlx.SliceAxis(x, 2, 4, 8) // [1,2,4]: strided, copied
	x3, flat := mlx.Reshape(x, 2, 3, 4), mlx.Reshape(x, 24)
	head := mlx.SliceAxis(x3, 0, 1, 2)     // the second block: contiguous
	tail := mlx.SliceAxis(flat, 0, 20, 24) // contiguous window
	mlx.Free(x3, flat)
	defer mlx.Free(part, head, tail)
	if b := cb(tail); b.parent == nil {
		t.Fatal("a contiguous slice was copied instead of read in place")
	}
	if b := cb(head); b.parent == nil {
		t.Fatal("a contiguous block was copied instead of read in place")
	}
	if b := cb(part); b.parent != nil {
		t.Fatal("a strided slice became a window")
	}
	x.Free() // the windows keep the storage
	if got := tail.Float32s(); got[0] != 20 || got[3] != 23 {
		t.Fatalf("window after its source was freed: %v", got)
	}
	if got := head.Float32s(); got[0] != 12 || got[11] != 23 {
		t.Fatalf("block window: %v", got)
	}
	// Writing into a window must not reach the storage it views.
	other := mlx.FromSlice(vals, 24)
	win := mlx.SliceAxis(other, 0, 0, 4)
	cb(win)
	one := mlx.FromSlice([]float32{-1}, 1)
	mlx.SliceAssign(win, one, []int{0}, []int{1}, nil)
	one.Free()
	if v := other.Float32s()[0]; v != 0 {
		t.Fatalf("writing into a window changed its source: %v", v)
	}
	if v := win.Float32s()[0]; v != -1 {
		t.Fatalf("window after the write: %v", v)
	}
	mlx.Free(other, win)
}
