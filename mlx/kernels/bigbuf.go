package kernels

import "sync"

// Large float32 buffers (prefill activations, widened weight tiles) are
// recycled through free lists that the garbage collector cannot empty.
//
// sync.Pool drops what it holds at every collection, and a prefill chunk
// of a bf16 0.5B model collects several times (its buffers are tens of
// MB): each collection threw the pooled buffers away, the next layer
// allocated them again, and Go's heap, which grows to twice what was live
// at the last collection, took the process to 1.19-1.32x the model file
// (issue 19's target: 1.15x). Here a freed buffer stays for the next op
// of its size, so a steady prefill allocates nothing and the heap stays
// at what is live plus these lists.
//
// The lists are bounded (bigCacheLimit bytes); a buffer beyond that goes
// to the garbage collector as before. Buffers are ordinary Go memory, so
// one never given back is collected like any other.

// BigMinFloats is the smallest buffer the free lists keep (1 MB): smaller
// ones are cheap to allocate and stay in sync.Pools.
const BigMinFloats = 256 << 10

// bigCacheLimit bounds the free lists' bytes. It holds the working set of
// a 512-token chunk of a 0.5B model (a widened tile and the MLP's
// activations) and lets go of the rest.
var bigCacheLimit int64 = 96 << 20

var bigCache struct {
	mu    sync.Mutex
	free  map[int][][]float32 // by capacity
	bytes int64
}

// TakeF32 returns a slice of n floats with capacity size (n <= size),
// from the free lists when one of exactly that capacity is there, else
// newly allocated. A recycled slice is not cleared.
func TakeF32(n, size int) []float32 {
	if size >= BigMinFloats {
		bigCache.mu.Lock()
		if l := bigCache.free[size]; len(l) > 0 {
			s := l[len(l)-1]
			l[len(l)-1] = nil
			bigCache.free[size] = l[:len(l)-1]
			bigCache.bytes -= 4 * int64(size)
			bigCache.mu.Unlock()
			return s[:n]
		}
		bigCache.mu.Unlock()
	}
	return make([]float32, n, size)
}

// takeAtLeast returns a kept buffer of n or more floats, the smallest
// there is, as s[:n]; nil when none is kept. Weight tiles take it: they
// only live during one matmul, so the largest tile's buffer serves the
// smaller projections' tiles too instead of each size keeping its own.
func takeAtLeast(n int) []float32 {
	bigCache.mu.Lock()
	defer bigCache.mu.Unlock()
	best := 0
	for size, l := range bigCache.free {
		if size >= n && len(l) > 0 && (best == 0 || size < best) {
			best = size
		}
	}
	if best == 0 {
		return nil
	}
	l := bigCache.free[best]
	s := l[len(l)-1]
	l[len(l)-1] = nil
	bigCache.free[best] = l[:len(l)-1]
	bigCache.bytes -= 4 * int64(best)
	return s[:n]
}

// GiveF32 hands s back for TakeF32 with its capacity. It must not be used
// after. Small slices, and any beyond the lists' bound, are left to the
// garbage collector.
func GiveF32(s []float32) {
	size := cap(s)
	if size < BigMinFloats {
		return
	}
	bigCache.mu.Lock()
	defer bigCache.mu.Unlock()
	if bigCache.bytes+4*int64(size) > bigCacheLimit {
		return
	}
	if bigCache.free == nil {
		bigCache.free = map[int][][]float32{}
	}
	bigCache.free[size] = append(bigCache.free[size], s[:size])
	bigCache.bytes += 4 * int64(size)
}

// BigCacheBytes is what the free lists hold (for memory reports).
func BigCacheBytes() int64 {
	bigCache.mu.Lock()
	defer bigCache.mu.Unlock()
	return bigCache.bytes
}

// ReleaseBigCache empties the free lists, leaving their buffers to the
// garbage collector (after a prefill, or when a model unloads), and
// returns the bytes they held.
func ReleaseBigCache() int64 {
	bigCache.mu.Lock()
	defer bigCache.mu.Unlock()
	n := bigCache.bytes
	clear(bigCache.free)
	bigCache.bytes = 0
	return n
}
