package whisper

import (
	"fmt"

	"hark/mlx"
)

// Decoder is one decoding session over one audio window: the
// cross-attention keys and values are computed once from the encoder output
// and the self-attention cache grows with each Forward. Create and Close it
// outside any mlx scope that closes before it: the caches it keeps move to
// the enclosing scope, if any. Close frees everything it holds.
type Decoder struct {
	m      *Model
	cross  []kvPair
	self   []kvCache
	batch  int
	offset int
}

// NewDecoder prepares a session for batch parallel sequences over audio
// ([1 or batch, n_audio_ctx, d] from Encode). A single audio row is shared
// by all sequences (beam search, best-of sampling) without being copied.
func (m *Model) NewDecoder(audio *mlx.Array, batch int) (*Decoder, error) {
	c := m.Config
	if audio.Ndim() != 3 || audio.Dim(2) != c.TextState || (audio.Dim(0) != 1 && audio.Dim(0) != batch) || batch < 1 {
		return nil, fmt.Errorf("whisper: audio features %v do not fit batch %d of width %d", audio.Shape(), batch, c.TextState)
	}
	d := &Decoder{m: m, batch: batch, self: make([]kvCache, len(m.decBlocks))}
	s := mlx.NewScope()
	defer s.Close()
	for _, b := range m.decBlocks {
		a := b.cross
		k, v := a.heads4(a.key.Forward(audio)), a.heads4(a.value.Forward(audio))
		s.KeepAll(k, v)
		d.cross = append(d.cross, kvPair{k, v})
	}
	return d, nil
}

// Len is the number of tokens already in the cache.
func (d *Decoder) Len() int { return d.offset }

// Batch is the number of parallel sequences.
func (d *Decoder) Batch() int { return d.batch }

// Forward appends tokens ([batch][n], the same n for every row) and returns
// the decoder's final hidden states [batch, n, d] (after the last
// LayerNorm); turn rows into logits with Logits.
func (d *Decoder) Forward(tokens [][]int) (*mlx.Array, error) {
	h, _, err := d.forward(tokens, false)
	return h, err
}

// ForwardWithCrossAttention is Forward that also returns, per decoder
// layer, the cross-attention scores q·kᵀ/√Dh as [batch, heads, n,
// n_audio_ctx] (the input of word-level timing). The caller frees them.
func (d *Decoder) ForwardWithCrossAttention(tokens [][]int) (*mlx.Array, []*mlx.Array, error) {
	return d.forward(tokens, true)
}

func (d *Decoder) forward(tokens [][]int, record bool) (*mlx.Array, []*mlx.Array, error) {
	m := d.m
	if len(tokens) != d.batch {
		return nil, nil, fmt.Errorf("whisper: %d token rows for a batch of %d", len(tokens), d.batch)
	}
	n := len(tokens[0])
	ids := make([]int32, 0, d.batch*n)
	for _, row := range tokens {
		if len(row) != n {
			return nil, nil, fmt.Errorf("whisper: token rows differ in length (%d and %d)", n, len(row))
		}
		for _, t := range row {
			if t < 0 || t >= m.Config.Vocab {
				return nil, nil, fmt.Errorf("whisper: token id %d outside the vocabulary of %d", t, m.Config.Vocab)
			}
			ids = append(ids, int32(t))
		}
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("whisper: no tokens to decode")
	}
	if d.offset+n > m.Config.TextCtx {
		return nil, nil, fmt.Errorf("whisper: %d tokens exceed the decoder context of %d", d.offset+n, m.Config.TextCtx)
	}
	old := make([]kvPair, len(d.self))
	for i := range d.self {
		old[i] = d.self[i].kvPair
	}
	s := mlx.NewScope()
	defer s.Close()
	idx := mlx.FromSlice(ids, d.batch, n)
	pos := mlx.SliceAxis(m.decPos, 0, d.offset, d.offset+n)
	x := mlx.Add(m.tokens.Forward(idx), pos)
	var rec *[]*mlx.Array
	var scores []*mlx.Array
	if record {
		rec = &scores
	}
	for i, b := range m.decBlocks {
		x = b.forward(x, &d.self[i], &d.cross[i], rec)
	}
	x = m.decLN.Forward(x)
	if err := mlx.Eval(x); err != nil {
		return nil, nil, err
	}
	for i := range d.self {
		s.KeepAll(d.self[i].k, d.self[i].v)
		if old[i].k != d.self[i].k {
			mlx.Free(old[i].k, old[i].v)
		}
	}
	s.KeepAll(scores...)
	d.offset += n
	return s.Keep(x), scores, nil
}

// Logits projects hidden states [..., d] onto the vocabulary with the tied
// token embedding: [..., n_vocab].
func (m *Model) Logits(h *mlx.Array) *mlx.Array { return m.tokens.AsLinear(h) }

// Reorder keeps, for each new row i, the cache of old row src[i] (beam
// search reorders hypotheses after every step).
func (d *Decoder) Reorder(src []int) error {
	if len(src) != d.batch {
		return fmt.Errorf("whisper: reorder of %d rows for a batch of %d", len(src), d.batch)
	}
	idx := make([]int32, len(src))
	for i, r := range src {
		if r < 0 || r >= d.batch {
			return fmt.Errorf("whisper: reorder source %d outside the batch", r)
		}
		idx[i] = int32(r)
	}
	if d.offset == 0 {
		return nil
	}
	s := mlx.NewScope()
	defer s.Close()
	ia := mlx.FromSlice(idx, len(idx))
	for i := range d.self {
		c := &d.self[i]
		k, v := mlx.Take(c.k, ia, 0), mlx.Take(c.v, ia, 0)
		s.KeepAll(k, v)
		mlx.Free(c.k, c.v)
		c.k, c.v = k, v
	}
	return nil
}

// Close frees the session's caches. It is idempotent.
func (d *Decoder) Close() error {
	for i := range d.self {
		mlx.Free(d.self[i].k, d.self[i].v)
		d.self[i] = kvCache{}
	}
	for _, c := range d.cross {
		mlx.Free(c.k, c.v)
	}
	d.cross = nil
	return nil
}
