package engine

import (
	"testing"

	"hark/mlx"
	"hark/models/nn"
)

// TestDecodeRowsTakeExactX: batched decode and a speculative verify pass
// must give each row bit for bit what single-row decode gives it, so
// their widest batches stay below the row count from which the backend
// may round x in quantized matmuls (the CPU's int8 kernel, for prompt
// chunks only).
func TestDecodeRowsTakeExactX(t *testing.T) {
	limit := mlx.RoundXMinRows()
	for _, c := range []struct {
		what string
		rows int
	}{{"batched decode (MaxBatchRows)", MaxBatchRows}, {"speculative verify (1 + MaxDraftTokens)", 1 + MaxDraftTokens}} {
		if c.rows >= limit {
			t.Errorf("%s reads %d rows at once, but from %d rows (mlx.RoundXMinRows) the backend rounds x", c.what, c.rows, limit)
		}
		if c.rows > nn.QuantizedDecodeRows {
			t.Errorf("%s reads %d rows at once, but a quantized KV cache attends one row at a time only up to %d (nn.QuantizedDecodeRows)", c.what, c.rows, nn.QuantizedDecodeRows)
		}
	}
}
