package whisper

import (
	"fmt"
	"math"
	"runtime"

	"hark/mlx"
)

// Encode runs the audio encoder on a log-mel window: mel is [n_mels,
// 2*n_audio_ctx] or batched [B, n_mels, 2*n_audio_ctx]. The result is
// [B, n_audio_ctx, d], owned by the caller.
//
//	x = gelu(conv1(mel)); x = gelu(conv2(x))   (kernel 3, pad 1, stride 1 then 2)
//	x = x + sinusoids; x = blocks(x); x = ln_post(x)
func (m *Model) Encode(mel *mlx.Array) (*mlx.Array, error) {
	c := m.Config
	shape := mel.Shape()
	if len(shape) == 2 {
		shape = append([]int{1}, shape...)
	}
	if len(shape) != 3 || shape[1] != c.NMels || shape[2] != 2*c.AudioCtx {
		return nil, fmt.Errorf("whisper: mel is %v, want [B, %d, %d]", mel.Shape(), c.NMels, 2*c.AudioCtx)
	}
	s := mlx.NewScope()
	defer s.Close()
	x := mlx.Transpose(mlx.Reshape(mel, shape...), 0, 2, 1) // channels last for Conv1d
	x = mlx.Gelu(mlx.Add(mlx.Conv1d(x, m.conv1W, 1, 1, 1), m.conv1B))
	x = mlx.Gelu(mlx.Add(mlx.Conv1d(x, m.conv2W, 2, 1, 1), m.conv2B))
	x = mlx.Add(x, m.encPos)
	for _, b := range m.encBlocks {
		// One scope per block: a block's temporaries (1500 x 4d floats
		// each) are freed before the next block runs, so peak memory does
		// not grow with the depth of the encoder.
		prev := x
		x = mlx.Scoped(func() []*mlx.Array { return []*mlx.Array{b.forward(prev, nil, nil, nil)} })[0]
		prev.Free()
		// A block leaves ~100 MB (whisper-base) of freed activations to
		// the collector, which would let the heap double before it
		// looks; collecting here keeps the peak near one block's worth.
		// The heap is almost all pointer-free float slices, so a cycle
		// costs well under a millisecond of marking.
		runtime.GC()
	}
	x = m.encLN.Forward(x)
	if err := mlx.Eval(x); err != nil {
		return nil, err
	}
	return s.Keep(x), nil
}

// forward runs one residual block. self holds the self-attention KV cache
// (nil for the encoder, which attends over all positions); cross holds the
// precomputed cross-attention keys and values (decoder only); rec, when
// not nil, receives the cross-attention scores.
func (b *block) forward(x *mlx.Array, self *kvCache, cross *kvPair, rec *[]*mlx.Array) *mlx.Array {
	h := b.attnLN.Forward(x)
	mask := mlx.Mask{}
	if self != nil {
		mask = mlx.CausalMask() // queries are aligned to the end of the cache
	}
	x = mlx.Add(x, b.attn.forward(h, self, nil, mask, nil))
	if b.cross != nil {
		h = b.crossLN.Forward(x)
		x = mlx.Add(x, b.cross.forward(h, nil, cross, mlx.Mask{}, rec))
	}
	h = b.mlp2.Forward(mlx.Gelu(b.mlp1.Forward(b.mlpLN.Forward(x))))
	return mlx.Add(x, h)
}

// kvPair is one layer's keys and values as [B, H, L, Dh].
type kvPair struct{ k, v *mlx.Array }

// kvCache is a growing self-attention cache.
type kvCache struct{ kvPair }

func (a *attention) heads4(x *mlx.Array) *mlx.Array {
	b, l, d := x.Dim(0), x.Dim(1), x.Dim(2)
	return mlx.Transpose(mlx.Reshape(x, b, l, a.heads, d/a.heads), 0, 2, 1, 3)
}

// forward computes multi-head attention of x over itself (cross == nil,
// appending to cache when given) or over precomputed cross keys/values.
func (a *attention) forward(x *mlx.Array, cache *kvCache, cross *kvPair, mask mlx.Mask, rec *[]*mlx.Array) *mlx.Array {
	q := a.heads4(a.query.Forward(x))
	var k, v *mlx.Array
	if cross != nil {
		k, v = cross.k, cross.v
	} else {
		k, v = a.heads4(a.key.Forward(x)), a.heads4(a.value.Forward(x))
		if cache != nil {
			if cache.k != nil {
				k = mlx.Concatenate([]*mlx.Array{cache.k, k}, 2)
				v = mlx.Concatenate([]*mlx.Array{cache.v, v}, 2)
			}
			cache.k, cache.v = k, v
		}
	}
	dh := q.Dim(3)
	scale := float32(1 / math.Sqrt(float64(dh)))
	if rec != nil {
		// Word timing needs the raw scaled scores q·kᵀ/√Dh of every head.
		*rec = append(*rec, mlx.MulScalar(mlx.MatmulT(q, k), float64(scale)))
	}
	b, l := x.Dim(0), x.Dim(1)
	var o *mlx.Array
	if k.Dim(0) == 1 && b > 1 {
		// Several sequences over one audio (beam search): fold them into
		// the query length instead of copying the audio keys per sequence.
		qf := mlx.Reshape(mlx.Transpose(q, 1, 0, 2, 3), 1, a.heads, b*l, dh)
		of := mlx.ScaledDotProductAttention(qf, k, v, scale, mask)
		o = mlx.Transpose(mlx.Reshape(of, a.heads, b, l, dh), 1, 0, 2, 3)
	} else {
		o = mlx.ScaledDotProductAttention(q, k, v, scale, mask)
	}
	o = mlx.Reshape(mlx.Transpose(o, 0, 2, 1, 3), b, l, -1)
	return a.out.Forward(o)
}
