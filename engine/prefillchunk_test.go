package engine

import (
	"testing"
	"time"
)

// Chunks follow the measured speed so one takes about prefillSlice, within
// bounds, raised to batchChunk where that stays under batchSlice; a
// caller's chunk size wins; the speed carries to the next prompt.
func TestPrefillChunksFollowSpeed(t *testing.T) {
	e, _ := loadStories(t)
	c := e.prefillChunks(0)
	if got := c.next(); got != maxPrefillChunk {
		t.Fatalf("a tiny model's first chunk is %d, want %d (its weights say it is fast)", got, maxPrefillChunk)
	}
	c.took(100, time.Second) // 100 tok/s: 40 tokens take 0.4 s
	if got := c.next(); got != 40 {
		t.Fatalf("at 100 tok/s the chunk is %d, want 40", got)
	}
	// At 170 tok/s 0.4 s is 68 tokens, below the matmuls' batch size, and
	// a 128-token chunk still takes 0.75 s: the chunk is raised to it.
	c.took(170, time.Second)
	if got := c.next(); got != batchChunk {
		t.Fatalf("at 170 tok/s the chunk is %d, want %d", got, batchChunk)
	}
	// At 300 tok/s a 0.4 s chunk is 120 tokens: raised too (0.43 s).
	c.took(300, time.Second)
	if got := c.next(); got != batchChunk {
		t.Fatalf("at 300 tok/s the chunk is %d, want %d", got, batchChunk)
	}
	c.took(10, 10*time.Second)
	if got := c.next(); got != minPrefillChunk {
		t.Fatalf("at 1 tok/s the chunk is %d, want the floor %d", got, minPrefillChunk)
	}
	if got := e.prefillChunks(0).next(); got != minPrefillChunk {
		t.Fatalf("the next prompt starts from the last speed: %d", got)
	}
	if got := e.prefillChunks(8).next(); got != 8 {
		t.Fatalf("a chosen chunk size is kept: %d", got)
	}
	e.prefillRate = 1e6
	if got := e.prefillChunks(0).next(); got != maxPrefillChunk {
		t.Fatalf("a fast engine's chunk is capped at %d: %d", maxPrefillChunk, got)
	}
}
