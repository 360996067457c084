package whisper

import (
	"fmt"

	"hark/mlx"
)

// Decoder is one decoding session over one audio window: the
// cross-attention keys and values come from a Cross (computed once per
// window) and the self-attention cache grows with each Forward. Create and
// Close it outside any mlx scope that closes before it: the caches it keeps
// move to the enclosing scope, if any. Close frees everything it holds.
type Decoder struct {
	m      *Model
	cross  []kvPair
	own    *Cross // the Cross NewDecoder made, freed by Close
	self   []kvCache
	batch  int
	offset int
}

// Cross is the cross-attention keys and values of one window's encoder
// output for every decoder layer. They depend on the audio only, so one
// Cross serves every decoder over that window (language detection, each
// temperature of the fallback, beams, word timing) instead of each paying
// 2 x layers projections of n_audio_ctx rows. Close frees it; decoders
// using it must not outlive it.
type Cross struct {
	kv   []kvPair
	rows int
}

// CrossAttention projects audio ([1 or B, n_audio_ctx, d] from Encode)
// onto every decoder layer's cross-attention keys and values. Call it
// outside any mlx scope that closes before the Cross is used.
func (m *Model) CrossAttention(audio *mlx.Array) (*Cross, error) {
	c := m.Config
	if audio.Ndim() != 3 || audio.Dim(2) != c.TextState || audio.Dim(0) < 1 {
		return nil, fmt.Errorf("whisper: audio features %v are not [B, n_audio_ctx, %d]", audio.Shape(), c.TextState)
	}
	x := &Cross{rows: audio.Dim(0)}
	s := mlx.NewScope()
	defer s.Close()
	for _, b := range m.decBlocks {
		a := b.cross
		// The projections are freed once split into heads: held to the
		// end of the scope they doubled the 12 [n_audio_ctx, d] arrays
		// (37 MB more for whisper-base, the peak of a short recording).
		k := a.key.Forward(audio)
		kh := a.heads4(k)
		k.Free()
		v := a.value.Forward(audio)
		vh := a.heads4(v)
		v.Free()
		// Off the garbage-collected heap: they are live through the
		// whole window (37 MB for whisper-base), and on the heap they
		// raised the decoder's heap goal, twice what is live, by as much
		// again.
		x.kv = append(x.kv, kvPair{mlx.Resident(kh), mlx.Resident(vh)})
	}
	var all []*mlx.Array
	for _, p := range x.kv {
		s.KeepAll(p.k, p.v)
		all = append(all, p.k, p.v)
	}
	if err := mlx.Eval(all...); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// Close frees the keys and values. It is idempotent.
func (x *Cross) Close() error {
	for _, p := range x.kv {
		mlx.Free(p.k, p.v)
	}
	x.kv = nil
	return nil
}

// NewDecoder prepares a session for batch parallel sequences over audio
// ([1 or batch, n_audio_ctx, d] from Encode). A single audio row is shared
// by all sequences (beam search, best-of sampling) without being copied.
func (m *Model) NewDecoder(audio *mlx.Array, batch int) (*Decoder, error) {
	c := m.Config
	if audio.Ndim() != 3 || audio.Dim(2) != c.TextState || (audio.Dim(0) != 1 && audio.Dim(0) != batch) || batch < 1 {
		return nil, fmt.Errorf("whisper: audio features %v do not fit batch %d of width %d", audio.Shape(), batch, c.TextState)
	}
	x, err := m.CrossAttention(audio)
	if err != nil {
		return nil, err
	}
	d, err := m.NewDecoderOver(x, batch)
	if err != nil {
		x.Close()
		return nil, err
	}
	d.own = x
	return d, nil
}

// NewDecoderOver prepares a session for batch parallel sequences over the
// window whose cross-attention keys and values x holds (1 or batch rows; a
// single row is shared by all sequences). The Decoder does not free x.
func (m *Model) NewDecoderOver(x *Cross, batch int) (*Decoder, error) {
	if x == nil || x.kv == nil {
		return nil, fmt.Errorf("whisper: decoder over a closed cross-attention")
	}
	if batch < 1 || (x.rows != 1 && x.rows != batch) {
		return nil, fmt.Errorf("whisper: cross-attention of %d audio rows does not fit batch %d", x.rows, batch)
	}
	return &Decoder{m: m, batch: batch, self: make([]kvCache, len(m.decBlocks)), cross: x.kv}, nil
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
		x = b.forward(x, &d.self[i], m.Config.TextCtx, &d.cross[i], rec)
	}
	x = m.decLN.Forward(x)
	if err := mlx.Eval(x); err != nil {
		return nil, nil, err
	}
	for i := range d.self {
		s.KeepAll(d.self[i].k, d.self[i].v) // storage made in this step
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
		d.self[i].free()
	}
	d.cross = nil
	if d.own != nil {
		d.own.Close()
		d.own = nil
	}
	return nil
}
