package cpu

import (
	"math/bits"
	"sync"

	"hark/mlx"
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
const (
	minPooledClass = 10 // 1024 floats: below that make is cheap
	maxPooledClass = 24 // 16M floats (64 MB)
)

var f32Pools [maxPooledClass + 1]sync.Pool

// f32Class is the smallest c with 1<<c >= n.
func f32Class(n int) int { return bits.Len(uint(n - 1)) }

// newF32 returns a zeroed slice of n floats, recycled when possible.
func newF32(n int) []float32 {
	c := f32Class(n)
	if n <= 0 || c < minPooledClass || c > maxPooledClass {
		return make([]float32, n)
	}
	if p, ok := f32Pools[c].Get().(*[]float32); ok {
		s := (*p)[:n]
		*p = nil
		holders.Put(p)
		clear(s)
		return s
	}
	return make([]float32, n, 1<<c)
}

// putF32 recycles a slice made by newF32; any other slice is left to the
// garbage collector.
func putF32(s []float32) {
	c := f32Class(cap(s))
	if c < minPooledClass || c > maxPooledClass || cap(s) != 1<<c {
		return
	}
	h, _ := holders.Get().(*[]float32)
	if h == nil {
		h = new([]float32)
	}
	*h = s[:cap(s)]
	f32Pools[c].Put(h)
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
