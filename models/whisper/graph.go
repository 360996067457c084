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
	// The decoder of the previous window leaves up to a heap's worth of
	// garbage (its goal doubles the live heap); collecting it first lets
	// the encoder's activations reuse that memory instead of adding to it,
	// which was the process's peak on long recordings.
	runtime.GC()
	s := mlx.NewScope()
	defer s.Close()
	x := m.frontEnd(mel, shape)
	// The front end's buffers (conv1's [2*n_audio_ctx, d] outputs, the
	// unrolled conv inputs) have sizes no block asks for: kept for reuse,
	// they would stay in the heap through every block. Let go and
	// collected here, their memory serves the blocks' buffers, which the
	// blocks then recycle among themselves: the heap stays flat through
	// the blocks without a collection after each.
	mlx.ReleaseScratch()
	runtime.GC()
	for _, b := range m.encBlocks {
		// One scope per block: a block's temporaries (1500 x 4d floats
		// each) are freed before the next block runs, so peak memory does
		// not grow with the depth of the encoder.
		prev := x
		x = mlx.Scoped(func() []*mlx.Array { return []*mlx.Array{b.encode(prev)} })[0]
		prev.Free()
	}
	x = m.encLN.Forward(x)
	if err := mlx.Eval(x); err != nil {
		return nil, err
	}
	return s.Keep(x), nil
}

// frontEnd is gelu(conv2(gelu(conv1(mel)))) + sinusoids, [B, n_audio_ctx,
// d], with each temporary freed once read: conv1's outputs are twice the
// length of a block's activations (6 MB each for whisper-base), and held
// to the end of Encode they were a third of the encoder's working set.
func (m *Model) frontEnd(mel *mlx.Array, shape []int) *mlx.Array {
	r := mlx.Reshape(mel, shape...)
	x := mlx.Transpose(r, 0, 2, 1) // channels last for Conv1d
	r.Free()
	x = convGelu(x, m.conv1W, m.conv1B, 1)
	x = convGelu(x, m.conv2W, m.conv2B, 2)
	out := mlx.Add(x, m.encPos)
	x.Free()
	return out
}

// convGelu is gelu(conv1d(x, w) + b) with kernel 3 and padding 1; it frees
// x.
func convGelu(x, w, b *mlx.Array, stride int) *mlx.Array {
	c := mlx.Conv1d(x, w, stride, 1, 1)
	x.Free()
	a := mlx.Add(c, b)
	c.Free()
	g := mlx.Gelu(a)
	a.Free()
	return g
}

// forward runs one residual block. self holds the self-attention KV cache
// (nil for the encoder, which attends over all positions); cross holds the
// precomputed cross-attention keys and values (decoder only); rec, when
// not nil, receives the cross-attention scores.
func (b *block) forward(x *mlx.Array, self *kvCache, limit int, cross *kvPair, rec *[]*mlx.Array) *mlx.Array {
	h := b.attnLN.Forward(x)
	mask := mlx.Mask{}
	if self != nil {
		mask = mlx.CausalMask() // queries are aligned to the end of the cache
	}
	x = mlx.Add(x, b.attn.forward(h, self, limit, nil, mask, nil))
	if b.cross != nil {
		h = b.crossLN.Forward(x)
		x = mlx.Add(x, b.cross.forward(h, nil, 0, cross, mlx.Mask{}, rec))
	}
	h = b.mlp2.Forward(mlx.Gelu(b.mlp1.Forward(b.mlpLN.Forward(x))))
	return mlx.Add(x, h)
}

// encode is forward for the encoder (no cache, no cross-attention), with
// each temporary freed as soon as its last reader has run. Over 1500
// positions a block's temporaries are ~70 MB (whisper-base) if they all
// live until the block's scope closes; freed early, their pooled buffers
// are reused by the next ops of the same block, so the working set is about
// the MLP's two [L, 4d] activations.
func (b *block) encode(x *mlx.Array) *mlx.Array {
	h := b.attnLN.Forward(x)
	a := b.attn.encode(h)
	h.Free()
	x1 := mlx.Add(x, a)
	a.Free()
	h = b.mlpLN.Forward(x1)
	out := mlx.Add(x1, b.mlpRows(h))
	mlx.Free(x1, h)
	return out
}

// encoderMLPRows is the row block of the encoder MLP: its [rows, 4d]
// hidden activations (twice: before and after GELU) are the largest
// temporaries of a block, 12 MB each over all 1500 positions of
// whisper-base, 3 MB each in blocks of 375 rows. Positions are
// independent in the MLP, and blocks of a few hundred rows keep the
// matmuls on their batched path.
const encoderMLPRows = 375

// mlpRows is mlp2(gelu(mlp1(h))) for h [B, L, d], a block of rows at a time.
func (b *block) mlpRows(h *mlx.Array) *mlx.Array {
	l := h.Dim(1)
	if l <= encoderMLPRows {
		return b.mlp(h)
	}
	var parts []*mlx.Array
	for i := 0; i < l; i += encoderMLPRows {
		hi := mlx.SliceAxis(h, 1, i, min(i+encoderMLPRows, l))
		parts = append(parts, b.mlp(hi))
		hi.Free()
	}
	out := mlx.Concatenate(parts, 1)
	mlx.Free(parts...)
	return out
}

func (b *block) mlp(h *mlx.Array) *mlx.Array {
	m := b.mlp1.Forward(h)
	g := mlx.Gelu(m)
	m.Free()
	m = b.mlp2.Forward(g)
	g.Free()
	return m
}

// encode is forward over x itself with no mask or cache, freeing as it goes.
func (a *attention) encode(x *mlx.Array) *mlx.Array {
	q, k, v := a.query.Forward(x), a.key.Forward(x), a.value.Forward(x)
	qh, kh, vh := a.heads4(q), a.heads4(k), a.heads4(v)
	mlx.Free(q, k, v)
	scale := float32(1 / math.Sqrt(float64(qh.Dim(3))))
	o := mlx.ScaledDotProductAttention(qh, kh, vh, scale, mlx.Mask{})
	mlx.Free(qh, kh, vh)
	b, l := x.Dim(0), x.Dim(1)
	t := mlx.Transpose(o, 0, 2, 1, 3)
	o.Free()
	r := mlx.Reshape(t, b, l, -1)
	t.Free()
	out := a.out.Forward(r)
	r.Free()
	return out
}

// kvPair is one layer's keys and values as [B, H, L, Dh].
type kvPair struct{ k, v *mlx.Array }

// kvCache is the decoder's self-attention cache: keys and values in
// [B, H, cap, Dh] storage written in place, of which the first n positions
// are valid. Attention reads views of those positions, so a step copies
// only its new keys and values; concatenating onto the old cache instead
// copied the whole cache every token, which was nearly all the decoder's
// garbage (about 1.4 MB a token late in a window of whisper-base) and kept
// the collector's heap goal, and the peak RSS, at twice what was live.
type kvCache struct {
	k, v *mlx.Array // nil until the first append
	n    int
}

// kvCacheStep is how many positions the storage grows by: a window's
// prompt and text fit in a few steps of it.
const kvCacheStep = 128

// append writes k and v ([B, H, L, Dh]) after the cached positions and
// returns views of all of them, owned by the current scope. The views must
// be freed before the next append, which would otherwise copy the storage
// to leave them unchanged. Storage made here belongs to the current scope
// too; the Decoder hands it to its caller's scope after each step.
func (c *kvCache) append(k, v *mlx.Array, limit int) (*mlx.Array, *mlx.Array) {
	b, h, l := k.Dim(0), k.Dim(1), k.Dim(2)
	if c.k == nil || c.n+l > c.k.Dim(2) {
		size := min(max((c.n+l+kvCacheStep-1)/kvCacheStep*kvCacheStep, c.n+l), max(limit, c.n+l))
		c.k, c.v = grown(c.k, k, size, c.n), grown(c.v, v, size, c.n)
	}
	mlx.SliceAssign(c.k, k, []int{0, 0, c.n}, []int{b, h, c.n + l}, nil)
	mlx.SliceAssign(c.v, v, []int{0, 0, c.n}, []int{b, h, c.n + l}, nil)
	c.n += l
	return mlx.SliceAxis(c.k, 2, 0, c.n), mlx.SliceAxis(c.v, 2, 0, c.n)
}

// grown returns storage of size positions shaped like like ([B, H, _, Dh])
// holding the first n positions of old, and frees old.
func grown(old, like *mlx.Array, size, n int) *mlx.Array {
	a := mlx.Zeros([]int{like.Dim(0), like.Dim(1), size, like.Dim(3)}, like.DType())
	if old != nil && n > 0 {
		keep := mlx.SliceAxis(old, 2, 0, n)
		mlx.SliceAssign(a, keep, []int{0, 0, 0}, []int{like.Dim(0), like.Dim(1), n}, nil)
		keep.Free()
	}
	old.Free()
	return a
}

// free releases the storage and empties the cache.
func (c *kvCache) free() {
	mlx.Free(c.k, c.v)
	*c = kvCache{}
}

// heads4 splits x [B, L, d] into heads [B, H, L, Dh] (a copy). The
// reshaped view of x is freed here, so freeing x releases its storage at
// once rather than when the scope closes.
func (a *attention) heads4(x *mlx.Array) *mlx.Array {
	b, l, d := x.Dim(0), x.Dim(1), x.Dim(2)
	r := mlx.Reshape(x, b, l, a.heads, d/a.heads)
	t := mlx.Transpose(r, 0, 2, 1, 3)
	r.Free()
	return t
}

// forward computes multi-head attention of x over itself (cross == nil,
// appending to cache when given) or over precomputed cross keys/values.
//
// limit is the most positions cache will hold (the decoder's context), so
// its storage never grows past it.
func (a *attention) forward(x *mlx.Array, cache *kvCache, limit int, cross *kvPair, mask mlx.Mask, rec *[]*mlx.Array) *mlx.Array {
	q := a.heads4(a.query.Forward(x))
	var k, v *mlx.Array
	if cross != nil {
		k, v = cross.k, cross.v
	} else {
		k, v = a.heads4(a.key.Forward(x)), a.heads4(a.value.Forward(x))
		if cache != nil {
			nk, nv := cache.append(k, v, limit)
			mlx.Free(k, v)
			k, v = nk, nv
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
