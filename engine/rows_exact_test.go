package engine

import (
	"testing"

	"hark/mlx/kernels"
)

// TestDecodeRowsTakeExactX: batched decode and a speculative verify pass
// must give each row bit for bit what single-row decode gives it, so
// their widest batches stay below the row count from which the CPU
// backend rounds x to int8 (prompt chunks only).
func TestDecodeRowsTakeExactX(t *testing.T) {
	for _, c := range []struct {
		what string
		rows int
	}{{"batched decode (MaxBatchRows)", MaxBatchRows}, {"speculative verify (1 + MaxDraftTokens)", 1 + MaxDraftTokens}} {
		if c.rows >= kernels.PackedInt8MinRows {
			t.Errorf("%s reads %d rows at once, but from %d rows (kernels.PackedInt8MinRows) matmuls round x to int8", c.what, c.rows, kernels.PackedInt8MinRows)
		}
	}
}
