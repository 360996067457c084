package whisper

import (
	"hark/mlx"
)

// linear is a Linear layer with weights in [out, in] layout, either dense
// float32 or MLX-quantized (packed uint32 + per-group scales and biases).
// bias may be nil (Whisper's key projections have none).
type linear struct {
	w, bias            *mlx.Array
	wq, scales, biases *mlx.Array
	groupSize, bits    int
}

func (l *linear) forward(x *mlx.Array) *mlx.Array {
	var y *mlx.Array
	if l.wq != nil {
		y = mlx.QuantizedMatmul(x, l.wq, l.scales, l.biases, true, l.groupSize, l.bits)
	} else {
		y = mlx.MatmulT(x, l.w)
	}
	if l.bias == nil {
		return y
	}
	r := mlx.Add(y, l.bias)
	y.Free()
	return r
}

func (l *linear) free() {
	if l != nil {
		mlx.Free(l.w, l.bias, l.wq, l.scales, l.biases)
	}
}

// embedding is the decoder's token table. Whisper ties it to the output
// projection, so it also serves as a bias-free linear layer (asLinear).
type embedding struct{ linear }

// lookup returns the rows of ids ([B, L] int32) as [B, L, D].
func (e *embedding) lookup(ids *mlx.Array) *mlx.Array {
	if e.wq != nil {
		return mlx.TakeQuantized(e.wq, e.scales, e.biases, ids, e.groupSize, e.bits)
	}
	return mlx.Take(e.w, ids, 0)
}

// asLinear is x @ table^T: the logits over the vocabulary.
func (e *embedding) asLinear(x *mlx.Array) *mlx.Array { return e.forward(x) }

// layerNorm holds a LayerNorm's affine parameters.
type layerNorm struct {
	w, b *mlx.Array
	eps  float32
}

func (n *layerNorm) forward(x *mlx.Array) *mlx.Array { return mlx.LayerNorm(x, n.w, n.b, n.eps) }

func (n *layerNorm) free() {
	if n != nil {
		mlx.Free(n.w, n.b)
	}
}
