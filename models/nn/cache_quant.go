package nn

import (
	"errors"
	"fmt"
	"runtime"
	"slices"

	"hark/mlx"
)

// KVQuant chooses how a cache stores keys and values: Bits 0 keeps them
// in the model's float (float32), as does KVFloat32Bits asked for
// explicitly; KVHalfBits stores IEEE f16 (llama.cpp's default KV type),
// converted to float32 as attention reads them; 4 or 8 stores them in
// MLX's affine format (the layout of mlx.Quantize), in groups of Group
// values along each head's vector.
type KVQuant struct {
	Bits  int `json:"kv_bits,omitempty"`
	Group int `json:"kv_group,omitempty"` // 0: 64
}

// KVHalfBits is the 16-bit cache; KVFloat32Bits names float32 where 0
// means "the default" (engine.Options.KVBits).
const (
	KVHalfBits    = 16
	KVFloat32Bits = 32
)

// KVBitsValues and KVGroupValues are the settings offered besides float32
// (the one list: settings, the fit verdicts and validation derive from
// it); the groups, for the quantized widths only, are the ones MLX's
// quantization accepts.
var (
	KVBitsValues  = []int{4, 8, KVHalfBits}
	KVGroupValues = []int{32, 64, 128}
)

// On reports whether the cache stores anything but float32.
func (q KVQuant) On() bool { return q.Bits != 0 && q.Bits != KVFloat32Bits }

// Half reports whether the cache stores IEEE f16.
func (q KVQuant) Half() bool { return q.Bits == KVHalfBits }

// Quantized reports whether the cache stores affine codes in groups.
func (q KVQuant) Quantized() bool { return q.On() && !q.Half() }

// Canonical is q with an explicit float32 (KVFloat32Bits) written as the
// zero KVQuant, so two settings that store alike compare equal.
func (q KVQuant) Canonical() KVQuant {
	if q.Bits == KVFloat32Bits && q.Group == 0 {
		return KVQuant{}
	}
	return q
}

// GroupSize is Group with its default.
func (q KVQuant) GroupSize() int {
	if q.Group == 0 {
		return 64
	}
	return q.Group
}

// Validate checks the bits and group on their own (the model's head sizes
// are checked when the cache first sees them: see KVShapeError).
func (q KVQuant) Validate() error {
	if !q.Quantized() {
		if q.Group != 0 {
			return fmt.Errorf("kv_group %d needs kv_bits of a quantized cache (%v)", q.Group, quantizedBits())
		}
		if q.On() && !slices.Contains(KVBitsValues, q.Bits) {
			return fmt.Errorf("kv_bits %d: the KV cache can be kept in %v bits (0 or %d: float32)", q.Bits, KVBitsValues, KVFloat32Bits)
		}
		return nil
	}
	if !slices.Contains(KVBitsValues, q.Bits) {
		return fmt.Errorf("kv_bits %d: the KV cache can be kept in %v bits (0 or %d: float32)", q.Bits, KVBitsValues, KVFloat32Bits)
	}
	if !slices.Contains(KVGroupValues, q.GroupSize()) {
		return fmt.Errorf("kv_group %d: the group size must be one of %v", q.Group, KVGroupValues)
	}
	return nil
}

// quantizedBits is KVBitsValues without the 16-bit cache.
func quantizedBits() []int {
	var out []int
	for _, b := range KVBitsValues {
		if (KVQuant{Bits: b}).Quantized() {
			out = append(out, b)
		}
	}
	return out
}

// BytesPerValue is what one cached value costs: float32's 4, f16's 2, or
// the code plus its share of the group's float32 scale and bias. It is
// the one place the memory estimate takes a cache's size from.
func (q KVQuant) BytesPerValue() float64 {
	switch {
	case !q.On():
		return 4
	case q.Half():
		return 2
	}
	return float64(q.Bits)/8 + 8/float64(q.GroupSize())
}

// KVShapeError says a layer's keys or values cannot be quantized in the
// chosen groups: each head's vector (or, for heads shorter than a group,
// the heads side by side) must split into whole groups.
type KVShapeError struct {
	What         string // "keys" or "values"
	Heads, Width int
	Group        int
}

func (e *KVShapeError) Error() string {
	return fmt.Sprintf("kv cache: %s of %d heads × %d cannot be quantized in groups of %d", e.What, e.Heads, e.Width, e.Group)
}

// quantLayout says how a [B, H, L, D] tensor is stored: per head when D
// splits into groups (rows [B, H, L, D], attention runs on the codes), or
// the heads of a position side by side when they are shorter than a group
// (rows [B, 1, L, H*D], dequantized for attention).
func quantLayout(h, d, g int) (perHead, ok bool) {
	switch {
	case d%g == 0:
		return true, true
	case g%d == 0 && (h*d)%g == 0:
		return false, true
	}
	return false, false
}

// qSide is one of K or V: codes, scales and biases [B, R, cap, W*bits/32 |
// W/g], or, kept in full precision, f [B, R, cap, W].
type qSide struct {
	quant, perHead bool
	r, w           int // rows per position and their width
	h, d           int // the heads as given
	packed, scales *mlx.Array
	biases, f      *mlx.Array
}

func (s *qSide) arrays() []*mlx.Array { return []*mlx.Array{s.packed, s.scales, s.biases, s.f} }

// qStore is a quantized cache's storage; n of cap positions are valid.
type qStore struct {
	b      int
	dtype  mlx.DType
	k, v   qSide
	cap, n int
	ready  bool
}

func (s *qStore) free() {
	mlx.Free(s.k.arrays()...)
	mlx.Free(s.v.arrays()...)
	*s = qStore{}
}

// QuantizedKVCache keeps every position, its keys and values quantized
// as it appends them (QuantizedKVCache.Attend then runs attention on the
// codes, as mlx-lm's quantized_scaled_dot_product_attention).
// FloatValues keeps the "values" in float32: DeepSeek's MLA passes its
// latent as keys and its small rotary key as values (NewLatentCache), and
// only the latent is worth quantizing.
type QuantizedKVCache struct {
	Q           KVQuant
	FloatValues bool
	st          *qStore
	rnd         round
}

// NewQuantizedKVCache returns an empty cache storing keys and values in q
// (q.Quantized() must hold).
func NewQuantizedKVCache(q KVQuant) *QuantizedKVCache {
	c := &QuantizedKVCache{Q: q}
	c.st = &qStore{}
	runtime.AddCleanup(c, func(s *qStore) { s.free() }, c.st)
	return c
}

// Free releases the storage now.
func (c *QuantizedKVCache) Free() { c.st.free() }

func (c *QuantizedKVCache) bits() (g, bits int) { return c.Q.GroupSize(), c.Q.Bits }

func (c *QuantizedKVCache) initSide(s *qSide, what string, h, d int, quant bool) {
	g, _ := c.bits()
	*s = qSide{quant: quant, perHead: true, r: h, w: d, h: h, d: d}
	if !quant {
		return
	}
	perHead, ok := quantLayout(h, d, g)
	if !ok {
		panic(&KVShapeError{What: what, Heads: h, Width: d, Group: g})
	}
	if !perHead {
		s.perHead, s.r, s.w = false, 1, h*d
	}
}

func (c *QuantizedKVCache) init(k, v *mlx.Array) {
	s := c.st
	if k.Ndim() != 4 || v.Ndim() != 4 || k.Dim(0) != v.Dim(0) || k.Dim(2) != v.Dim(2) {
		panic(fmt.Errorf("quantized kv cache: keys %v and values %v must be [B, H, L, D] alike", k.Shape(), v.Shape()))
	}
	if !s.ready {
		s.b, s.dtype = k.Dim(0), k.DType()
		c.initSide(&s.k, "keys", k.Dim(1), k.Dim(3), true)
		c.initSide(&s.v, "values", v.Dim(1), v.Dim(3), !c.FloatValues)
		s.ready = true
		return
	}
	if k.Dim(0) != s.b || k.Dim(1) != s.k.h || k.Dim(3) != s.k.d || v.Dim(1) != s.v.h || v.Dim(3) != s.v.d {
		panic(fmt.Errorf("quantized kv cache: keys %v / values %v do not match the cached [%d, %d, _, %d]", k.Shape(), v.Shape(), s.b, s.k.h, s.k.d))
	}
}

// rows turns [B, H, L, D] into the side's rows [B, R, L, W].
func (s *qSide) rows(x *mlx.Array) *mlx.Array {
	if s.perHead {
		return x
	}
	t := mlx.Transpose(x, 0, 2, 1, 3) // [B, L, H, D]
	r := mlx.Reshape(t, t.Dim(0), 1, t.Dim(1), s.w)
	t.Free()
	return r
}

func (s *qStore) reserve(total int, g, bits int) {
	if total <= s.cap {
		return
	}
	nc := (total + growStep - 1) / growStep * growStep
	for _, sd := range []*qSide{&s.k, &s.v} {
		if sd.quant {
			sd.packed = regrow(sd.packed, s.b, sd.r, nc, sd.w*bits/32, s.n, mlx.Uint32)
			sd.scales = regrow(sd.scales, s.b, sd.r, nc, sd.w/g, s.n, s.dtype)
			sd.biases = regrow(sd.biases, s.b, sd.r, nc, sd.w/g, s.n, s.dtype)
		} else {
			sd.f = regrow(sd.f, s.b, sd.r, nc, sd.w, s.n, s.dtype)
		}
	}
	s.cap = nc
}

func (c *QuantizedKVCache) appendKV(k, v *mlx.Array) {
	c.init(k, v)
	s := c.st
	g, bits := c.bits()
	l := k.Dim(2)
	s.reserve(s.n+l, g, bits)
	for i, sd := range []*qSide{&s.k, &s.v} {
		x := []*mlx.Array{k, v}[i]
		start, stop := []int{0, 0, s.n}, []int{s.b, sd.r, s.n + l}
		r := sd.rows(x)
		if !sd.quant {
			mlx.SliceAssign(sd.f, r, start, stop, nil)
		} else {
			wq, sc, bi, err := mlx.Quantize(r, g, bits)
			if err != nil {
				panic(fmt.Errorf("quantized kv cache: %w", err))
			}
			mlx.SliceAssign(sd.packed, wq, start, stop, nil)
			mlx.SliceAssign(sd.scales, sc, start, stop, nil)
			mlx.SliceAssign(sd.biases, bi, start, stop, nil)
			mlx.Free(wq, sc, bi)
		}
		if r != x {
			r.Free()
		}
	}
	s.n += l
}

// float returns positions [0, n) of a side as [B, H, n, D] float, the
// codes dequantized.
func (s *qStore) float(sd *qSide, g, bits int) *mlx.Array {
	if !sd.quant {
		return mlx.SliceAxis(sd.f, 2, 0, s.n)
	}
	p, sc, bi := mlx.SliceAxis(sd.packed, 2, 0, s.n), mlx.SliceAxis(sd.scales, 2, 0, s.n), mlx.SliceAxis(sd.biases, 2, 0, s.n)
	x := mlx.Dequantize(p, sc, bi, g, bits)
	mlx.Free(p, sc, bi)
	if sd.perHead {
		return x
	}
	r := mlx.Reshape(x, s.b, s.n, sd.h, sd.d)
	t := mlx.Transpose(r, 0, 2, 1, 3)
	mlx.Free(x, r)
	return t
}

// Update appends k, v and returns every cached position dequantized:
// attention that cannot read codes (sinks, MLA) goes through here.
func (c *QuantizedKVCache) Update(k, v *mlx.Array) (*mlx.Array, *mlx.Array) {
	c.appendKV(k, v)
	return c.Dequantized()
}

// Dequantized returns the cached keys and values as float [B, H, n, D],
// what attention over the codes is equal to.
func (c *QuantizedKVCache) Dequantized() (*mlx.Array, *mlx.Array) {
	g, bits := c.bits()
	return c.st.float(&c.st.k, g, bits), c.st.float(&c.st.v, g, bits)
}

// Attend appends k, v and runs attention of q [B, Hq, Lq, D] over every
// cached position. Where keys and values are both stored per head, a
// decode step and up to QuantizedDecodeRows causal rows read the codes
// through the decode op, and other short queries (a window or a softcap)
// through a quantized matmul of the scaled queries with the keys and one
// of the probabilities with the values (mlx-lm's
// quantized_scaled_dot_product_attention); a prompt chunk, and every
// other layout, attends over the dequantized cache.
func (c *QuantizedKVCache) Attend(q, k, v *mlx.Array, scale float32, mask mlx.Mask, softcap float32) *mlx.Array {
	c.appendKV(k, v)
	s := c.st
	if !s.k.quant || !s.v.quant || !s.k.perHead || !s.v.perHead || mask.Array != nil {
		kk, vv := c.Dequantized()
		defer mlx.Free(kk, vv)
		return Attention(q, kk, vv, scale, mask, softcap)
	}
	g, bits := c.bits()
	if q.Dim(2) == 1 && softcap == 0 && (mask.Window <= 0 || mask.Window >= s.n) {
		// A decode step sees every position: the fused op (a backend may
		// read the codes in one pass instead of two matmuls per head).
		return mlx.QuantizedDecodeAttention(q,
			mlx.QuantizedKV{Packed: s.k.packed, Scales: s.k.scales, Biases: s.k.biases},
			mlx.QuantizedKV{Packed: s.v.packed, Scales: s.v.scales, Biases: s.v.biases},
			mlx.QuantizedDecodeParams{N: s.n, Scale: scale, Group: g, Bits: bits})
	}
	if lq := q.Dim(2); lq <= QuantizedDecodeRows && mask.Causal && softcap == 0 && (mask.Window <= 0 || mask.Window >= s.n) {
		return c.attendRows(q, scale, g, bits)
	}
	if q.Dim(2) > QuantizedDecodeRows {
		// A prompt chunk: attention over the dequantized cache, the same
		// numbers, through the float kernels. Two quantized matmuls per
		// kv head over the codes prefilled a 2,000-token prompt into an
		// 8-bit cache at 75-80 tok/s against 113-215 this way (2 rounds
		// of alternating processes, loaded machine, the same tokens
		// out). The float copy lives for one layer, and is a 14th of
		// the scores the matmuls form for a 512-row chunk of a 0.5B
		// model (7 query heads per kv head).
		kk, vv := c.Dequantized()
		defer mlx.Free(kk, vv)
		return Attention(q, kk, vv, scale, mask, softcap)
	}
	sc := mlx.NewScope()
	defer sc.Close()
	hq, hkv, lq, d := q.Dim(1), s.k.h, q.Dim(2), q.Dim(3)
	if hq%hkv != 0 {
		panic(fmt.Errorf("quantized kv cache: %d query heads for %d kv heads", hq, hkv))
	}
	rep, n := hq/hkv, s.n
	qs := mlx.MulScalar(q, float64(scale))
	var causal *mlx.Array
	if mask.Causal && (lq > 1 || (mask.Window > 0 && mask.Window < n)) {
		causal = mlx.CreateCausalMask(lq, n, mask.Window)
	}
	part := func(a *mlx.Array, b, h int) *mlx.Array {
		x := mlx.Slice(a, []int{b, h, 0, 0}, []int{b + 1, h + 1, n, a.Dim(3)}, nil)
		return mlx.Reshape(x, n, a.Dim(3))
	}
	rows := make([]*mlx.Array, 0, s.b)
	for b := range s.b {
		heads := make([]*mlx.Array, 0, hkv)
		for h := range hkv {
			qh := mlx.Reshape(mlx.Copy(mlx.Slice(qs, []int{b, h * rep, 0, 0}, []int{b + 1, (h + 1) * rep, lq, d}, nil)), rep*lq, d)
			scores := mlx.QuantizedMatmul(qh, part(s.k.packed, b, h), part(s.k.scales, b, h), part(s.k.biases, b, h), true, g, bits)
			if softcap > 0 {
				scores = mlx.MulScalar(mlx.Tanh(mlx.DivScalar(scores, float64(softcap))), float64(softcap))
			}
			if causal != nil {
				s3 := mlx.Reshape(scores, rep, lq, n)
				scores = mlx.Reshape(mlx.Where(causal, s3, mlx.Scalar(negInf, scores.DType())), rep*lq, n)
			}
			p := mlx.Softmax(scores, -1)
			o := mlx.QuantizedMatmul(p, part(s.v.packed, b, h), part(s.v.scales, b, h), part(s.v.biases, b, h), false, g, bits)
			heads = append(heads, mlx.Reshape(o, 1, rep, lq, s.v.d))
		}
		rows = append(rows, mlx.Concatenate(heads, 1))
	}
	if len(rows) == 1 {
		return sc.Keep(rows[0])
	}
	return sc.Keep(mlx.Concatenate(rows, 0))
}

// QuantizedDecodeRows is the most query rows (speculative verification's
// drafts and the token before them) that Attend takes one at a time
// through the decode op, each over the positions it sees: a backend may
// round q for integer dot products in that op (mlx.KVRounder), so the
// matmul path's results would differ from single-row decode's, and a
// verified draft token could differ from the one plain decoding picks.
const QuantizedDecodeRows = 96

// attendRows is causal attention of each row of q over the positions up
// to its own through the decode op, bit for bit what decoding that row
// alone would give.
func (c *QuantizedKVCache) attendRows(q *mlx.Array, scale float32, g, bits int) *mlx.Array {
	s := c.st
	sc := mlx.NewScope()
	defer sc.Close()
	b, hq, lq, d := q.Dim(0), q.Dim(1), q.Dim(2), q.Dim(3)
	k := mlx.QuantizedKV{Packed: s.k.packed, Scales: s.k.scales, Biases: s.k.biases}
	v := mlx.QuantizedKV{Packed: s.v.packed, Scales: s.v.scales, Biases: s.v.biases}
	rows := make([]*mlx.Array, lq)
	for i := range lq {
		qi := mlx.Copy(mlx.Slice(q, []int{0, 0, i, 0}, []int{b, hq, i + 1, d}, nil))
		rows[i] = mlx.QuantizedDecodeAttention(qi, k, v, mlx.QuantizedDecodeParams{N: s.n - lq + 1 + i, Scale: scale, Group: g, Bits: bits})
	}
	return sc.Keep(mlx.Concatenate(rows, 2))
}

// AttendDecode has no fused path: Attend reads the codes.
func (c *QuantizedKVCache) AttendDecode(*mlx.Array, mlx.DecodeAttentionParams) *mlx.Array { return nil }

// Offset is the number of cached positions.
func (c *QuantizedKVCache) Offset() int { return c.st.n }

// Trim drops the last n positions.
func (c *QuantizedKVCache) Trim(n int) bool {
	if n < 0 || n > c.st.n {
		return false
	}
	c.st.n -= n
	return true
}

// Reset empties the cache, keeping its buffers.
func (c *QuantizedKVCache) Reset() { c.st.n = 0; c.rnd = round{} }

// Bytes is the memory the storage holds.
func (c *QuantizedKVCache) Bytes() int64 {
	var n int64
	for _, sd := range []*qSide{&c.st.k, &c.st.v} {
		for _, a := range sd.arrays() {
			if a != nil {
				n += int64(a.Size() * a.DType().Size())
			}
		}
	}
	return n
}

// qSnapshot holds copies of the valid positions.
type qSnapshot struct {
	st qStore
}

func (*qSnapshot) snapshot() {}

// Snapshot copies the cache.
func (c *QuantizedKVCache) Snapshot() Snapshot {
	s := c.st
	snap := &qSnapshot{st: qStore{b: s.b, dtype: s.dtype, k: s.k, v: s.v, n: s.n, ready: s.ready}}
	for _, sd := range []*qSide{&snap.st.k, &snap.st.v} {
		for _, a := range []**mlx.Array{&sd.packed, &sd.scales, &sd.biases, &sd.f} {
			if *a == nil {
				continue
			}
			view := mlx.SliceAxis(*a, 2, 0, s.n)
			*a = mlx.Detach(mlx.Copy(view))
			view.Free()
		}
	}
	runtime.AddCleanup(snap, func(st qStore) {
		mlx.Free(st.k.arrays()...)
		mlx.Free(st.v.arrays()...)
	}, snap.st)
	return snap
}

// Restore returns to a snapshot taken from a QuantizedKVCache.
func (c *QuantizedKVCache) Restore(sn Snapshot) error {
	qs, ok := sn.(*qSnapshot)
	if !ok {
		return fmt.Errorf("quantized kv cache: cannot restore a %T", sn)
	}
	src := &qs.st
	c.st.free()
	s := c.st
	*s = qStore{b: src.b, dtype: src.dtype, ready: src.ready}
	s.k, s.v = src.k, src.v
	for _, sd := range []*qSide{&s.k, &s.v} {
		sd.packed, sd.scales, sd.biases, sd.f = nil, nil, nil, nil
	}
	if src.n == 0 {
		return nil
	}
	g, bits := c.bits()
	s.reserve(src.n, g, bits)
	for i, sd := range []*qSide{&s.k, &s.v} {
		from := []*qSide{&src.k, &src.v}[i]
		dst, srcs := sd.arrays(), from.arrays()
		for j, a := range dst {
			if a != nil {
				mlx.SliceAssign(a, srcs[j], []int{0, 0, 0}, []int{s.b, sd.r, src.n}, nil)
			}
		}
	}
	s.n = src.n
	return nil
}

// QuantizeCaches returns caches with every full-attention cache (KVCache,
// the MLA latent cache among them) replaced by an empty quantized one,
// freeing the replaced ones. Sliding-window caches stay float32: their
// memory is bounded by the window. Call it on fresh caches.
//
// For the 16-bit cache (q.Half()) the full-attention caches stay and
// store IEEE f16 instead (MLA latent ones too); sliding windows again stay
// float32.
func QuantizeCaches(cs []Cache, q KVQuant) []Cache {
	if !q.On() {
		return cs
	}
	if q.Half() {
		for _, c := range cs {
			if kc, ok := c.(*KVCache); ok && kc.st.n == 0 && kc.st.cap == 0 {
				kc.st.half = true
			}
		}
		return cs
	}
	out := make([]Cache, len(cs))
	replaced := map[Cache]Cache{}
	for i, c := range cs {
		kc, ok := c.(*KVCache)
		if !ok {
			out[i] = c
			continue
		}
		qc := NewQuantizedKVCache(q)
		qc.FloatValues = kc.latent
		kc.Free()
		out[i] = qc
		replaced[c] = qc
	}
	// A layer sharing another's keys and values must follow its source to
	// the new cache, or it would read the freed one's offset.
	for i, c := range out {
		if sc, ok := c.(*SharedCache); ok {
			if nc, ok := replaced[sc.Source()]; ok {
				out[i] = NewSharedCache(nc)
			}
		}
	}
	return out
}

// CacheBytes sums the storage the caches hold.
func CacheBytes(cs []Cache) int64 {
	var n int64
	for _, c := range cs {
		if b, ok := c.(interface{ Bytes() int64 }); ok {
			n += b.Bytes()
		}
	}
	return n
}

// AsKVShapeError unwraps a panic value or error into a *KVShapeError.
func AsKVShapeError(v any) (*KVShapeError, bool) {
	var e *KVShapeError
	switch x := v.(type) {
	case *KVShapeError:
		return x, true
	case error:
		if errors.As(x, &e) {
			return e, true
		}
	}
	return nil, false
}
