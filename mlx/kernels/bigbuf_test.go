package kernels

import "testing"

// A given-back buffer comes back for the next request of its capacity,
// the lists stay within their bound, and ReleaseBigCache empties them.
func TestBigBufferFreeLists(t *testing.T) {
	ReleaseBigCache()
	defer ReleaseBigCache()
	size := BigMinFloats + 1024
	a := TakeF32(size-3, size)
	if len(a) != size-3 || cap(a) != size {
		t.Fatalf("TakeF32: len %d cap %d, want %d and %d", len(a), cap(a), size-3, size)
	}
	a[0] = 42
	GiveF32(a)
	if got := BigCacheBytes(); got != 4*int64(size) {
		t.Fatalf("after GiveF32 the lists hold %d bytes, want %d", got, 4*size)
	}
	if b := TakeF32(5, 2*size); cap(b) != 2*size {
		t.Fatalf("a request of another capacity got cap %d", cap(b))
	}
	b := TakeF32(size, size)
	if &b[0] != &a[0] {
		t.Fatal("the given-back buffer was not reused")
	}
	if BigCacheBytes() != 0 {
		t.Fatalf("the lists still hold %d bytes", BigCacheBytes())
	}
	// A tile takes the smallest kept buffer large enough.
	GiveF32(make([]float32, 3*size))
	GiveF32(make([]float32, 2*size))
	if c := getTile(size + 7); cap(c) != 2*size || len(c) != size+7 {
		t.Fatalf("getTile took len %d cap %d, want the %d-float buffer", len(c), cap(c), 2*size)
	}
	if c := getTile(4 * size); cap(c) < 4*size || BigCacheBytes() != 12*int64(size) {
		t.Fatalf("getTile past every kept buffer: cap %d, lists %d bytes", cap(c), BigCacheBytes())
	}
	ReleaseBigCache()
	// Small buffers are not kept.
	GiveF32(make([]float32, BigMinFloats-1))
	if BigCacheBytes() != 0 {
		t.Fatal("a small buffer was kept")
	}
	// Past the bound, buffers are left to the collector.
	old := bigCacheLimit
	bigCacheLimit = 4 * int64(size) * 2
	defer func() { bigCacheLimit = old }()
	for range 3 {
		GiveF32(make([]float32, size))
	}
	if got := BigCacheBytes(); got != 4*int64(size)*2 {
		t.Fatalf("the lists hold %d bytes, bound %d", got, bigCacheLimit)
	}
	if n := ReleaseBigCache(); n != 4*int64(size)*2 || BigCacheBytes() != 0 {
		t.Fatalf("ReleaseBigCache returned %d and left %d", n, BigCacheBytes())
	}
}
