package engine

import "time"

// A stop must reach prefill within about a second, and prefill can only
// stop between chunks: a chunk is sized to take about prefillSlice at the
// speed measured, up to maxPrefillChunk tokens (past which bigger batches
// gain little). A small model prefills whole 512-token chunks in a few
// milliseconds, so its chunking does not change; a large one on a CPU gets
// chunks of a few hundred tokens or fewer.
const (
	prefillSlice    = 400 * time.Millisecond
	maxPrefillChunk = 512
	// minPrefillChunk is the smallest batch the CPU's AMX GEMM takes
	// (kernels' amxMinM): below it prefill runs at the float32 streaming
	// speed, 3-4x the CPU per token, and on a busy machine a slow chunk
	// made the next one small, keeping a bf16 0.5B model at 16-token
	// chunks for a whole prompt.
	minPrefillChunk = 32
	// Below about 100 rows a CPU's quantized matmul decodes the weights
	// for every row instead of running one GEMM over the batch, and the
	// tokens per second drop by almost half (0.5B q4: chunks of ~68 tokens
	// prefilled at ~60% of the speed of 128-token ones). So a chunk is
	// raised to batchChunk when that still takes under batchSlice at the
	// speed measured, which keeps a stop within a second.
	batchChunk = 128
	batchSlice = 900 * time.Millisecond
	// guessBytesPerSecond seeds the first prefill's speed from the weights'
	// size (tokens/s ≈ this / WeightBytes): conservative for a CPU, so the
	// first chunk of a big model is small and the measured speed takes over.
	guessBytesPerSecond = 100e9
)

// prefillChunker hands out chunk sizes and learns the speed.
type prefillChunker struct {
	e     *Engine
	fixed int     // Options.PrefillChunk, when the caller chose
	rate  float64 // tokens per second
}

func (e *Engine) prefillChunks(fixed int) *prefillChunker {
	c := &prefillChunker{e: e, fixed: fixed, rate: e.prefillRate}
	if c.rate <= 0 {
		if wb := e.Model.Info().WeightBytes; wb > 0 {
			c.rate = guessBytesPerSecond / float64(wb)
		}
	}
	return c
}

func (c *prefillChunker) next() int {
	if c.fixed > 0 {
		return c.fixed
	}
	if c.rate <= 0 {
		return maxPrefillChunk
	}
	n := max(minPrefillChunk, min(maxPrefillChunk, int(c.rate*prefillSlice.Seconds())))
	if n < batchChunk && c.rate*batchSlice.Seconds() >= batchChunk {
		n = batchChunk
	}
	return n
}

// took records that n tokens took d, for the next chunk and the next
// generation on this engine.
func (c *prefillChunker) took(n int, d time.Duration) {
	if d <= 0 {
		return
	}
	c.rate = float64(n) / d.Seconds()
	c.e.prefillRate = c.rate
}
