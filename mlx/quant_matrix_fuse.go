package mlx

// QuantPartsPacker is implemented by backends that can pack several
// quantized matrices with the same columns and format straight into one
// matrix of their rows stacked (fused projections: q/k/v, gate/up),
// without first joining them in MLX's layout: joining copies every fused
// matrix once more, a fifth of a quantized model's load time.
type QuantPartsPacker interface {
	// PackQuantParts returns the packed storage of the parts' rows one
	// after another, or nil (having changed nothing) when the backend
	// cannot pack these parts as one.
	PackQuantParts(wq, scales, biases []*Array, rows []int, cols, groupSize, bits int) *Array
}

// PackedQuantMatrices joins ms, matrices in MLX's layout with the same
// columns and format, into one packed matrix of their rows stacked, as
// NewQuantMatrix over their concatenated arrays followed by Pack gives,
// or returns nil (having changed nothing) when the backend cannot. On
// success ms's arrays are no longer used: the caller frees them. Matrices
// still in their checkpoints' bytes pack from them, all or none.
func PackedQuantMatrices(ms []*QuantMatrix) *QuantMatrix {
	if len(ms) == 0 {
		return nil
	}
	if ms[0].src != nil {
		return packedBytesMatrices(ms)
	}
	wq := make([]*Array, len(ms))
	scales := make([]*Array, len(ms))
	biases := make([]*Array, len(ms))
	rows := make([]int, len(ms))
	total := 0
	for i, m := range ms {
		if m.packed != nil || m.src != nil || m.biases == nil || m.cols != ms[0].cols || m.groupSize != ms[0].groupSize || m.bits != ms[0].bits {
			return nil
		}
		wq[i], scales[i], biases[i], rows[i] = m.wq, m.scales, m.biases, m.rows
		total += m.rows
	}
	pk, ok := backendOf("PackedQuantMatrices", append(append(append([]*Array(nil), wq...), scales...), biases...)...).(QuantPartsPacker)
	if !ok {
		return nil
	}
	p := pk.PackQuantParts(wq, scales, biases, rows, ms[0].cols, ms[0].groupSize, ms[0].bits)
	if p == nil {
		return nil
	}
	return &QuantMatrix{packed: p, rows: total, cols: ms[0].cols, groupSize: ms[0].groupSize, bits: ms[0].bits}
}
