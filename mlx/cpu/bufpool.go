package cpu

import (
	"math/bits"
	"sync"

	"hark/mlx"
	"hark/mlx/kernels"
)

// Recycled float32 storage for op outputs. A decode step makes a few
// hundred short-lived arrays (a few KB to a few hundred KB each). Fresh
// allocations from a heap that also holds the model's weights are rarely
// in cache, and the garbage collector only comes back for them after
// hundreds of MB, so every op wrote to cold memory. Buffers freed by their
// last array go back to a per-size-class sync.Pool and the next op of that
// size writes to memory that is still warm; the pools drain themselves at
// each collection, so nothing is held for long.
//
// Only buffers made by newF32 and stored with setPooledF32 are recycled,
// and only when the last reference (views included) is released: an op
// output never shares its slice with another array.
//
// Sizes go in four classes per power of two (1.25, 1.5, 1.75, 2 × 2^k),
// so a recycled buffer is at most 25% larger than asked for. Whole powers
// of two wasted up to half: Whisper's encoder asks for 1500×512 and
// 1500×2048 floats, which were held as 4 MB and 16 MB buffers, a third
// more memory than they used, and its 1500×1500 attention scores as 16 MB
// for 9 MB.
const (
	// Sizes above 256 floats (1 KB) are pooled: a one-token step of a
	// 512-wide model (whisper-base's decoder) makes dozens of 512-float
	// outputs, which unpooled were about 0.2 MB of garbage per token,
	// enough to run a collection every window at a goal of twice
	// whatever was live then (peak RSS of a 143 s clip: 322 → 289 MB).
	minPooledClass = 9
	maxPooledClass = 24 // 16M floats (64 MB)
	classSteps     = 4  // classes per power of two
)

var f32Pools [classSteps * (maxPooledClass + 1)]sync.Pool

// f32Class returns the pool index and the capacity of the smallest class
// holding n floats (n > 0); the index is -1 outside the pooled range.
func f32Class(n int) (int, int) {
	c := bits.Len(uint(n - 1)) // 2^c >= n
	if n <= 0 || c < minPooledClass || c > maxPooledClass {
		return -1, n
	}
	base := 1 << (c - 1)
	step := base / classSteps
	k := (n - base + step - 1) / step // 1..classSteps
	return classSteps*(c-1) + k - 1, base + k*step
}

// newF32 returns a zeroed slice of n floats, recycled when possible.
// Buffers of a MB or more go through the kernels' free lists
// (kernels.TakeF32), which a garbage collection does not empty: prefill
// frees and asks again for tens of MB per layer.
func newF32(n int) []float32 {
	idx, size := f32Class(n)
	if idx < 0 {
		return make([]float32, n)
	}
	if size >= kernels.BigMinFloats {
		s := kernels.TakeF32(n, size)
		clear(s)
		return s
	}
	if p, ok := f32Pools[idx].Get().(*[]float32); ok {
		s := (*p)[:n]
		*p = nil
		holders.Put(p)
		clear(s)
		return s
	}
	return make([]float32, n, size)
}

// putF32 recycles a slice made by newF32; any other slice is left to the
// garbage collector.
func putF32(s []float32) {
	if cap(s) == 0 {
		return
	}
	idx, size := f32Class(cap(s))
	if idx < 0 || size != cap(s) {
		return
	}
	if size >= kernels.BigMinFloats {
		kernels.GiveF32(s)
		return
	}
	h, _ := holders.Get().(*[]float32)
	if h == nil {
		h = new([]float32)
	}
	*h = s[:cap(s)]
	f32Pools[idx].Put(h)
}

// holders recycles the *[]float32 boxes the pools store, which would
// otherwise be one allocation per recycled buffer.
var holders sync.Pool

// setPooledF32 is setF32 for a result made by newF32: it becomes out's
// storage (recycled when out's storage is released), or, for a half-
// precision out, is converted and recycled at once.
func setPooledF32(out *mlx.Array, r []float32) {
	if out.DType() != mlx.Float32 {
		setF32(out, r)
		putF32(r)
		return
	}
	setData(out, r)
	out.Storage().(*cpuBuf).pooled = true
}

// ReleaseScratch implements mlx.ScratchReleaser: the large buffers kept
// for reuse (kernels.TakeF32) go to the garbage collector.
func (cpuBackend) ReleaseScratch() int64 {
	return kernels.ReleaseBigCache()
}
