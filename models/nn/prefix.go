package nn

import "hark/mlx"

// KVRange returns detached copies of positions [from, to) of a float
// full-attention cache's keys and values, [1, H, to-from, D], for a
// prefix cache to keep; ok is false for any other kind of cache (sliding
// windows drop positions, quantized and latent caches store them in
// their own form) or a range it does not hold.
func KVRange(c Cache, from, to int) (k, v *mlx.Array, ok bool) {
	kc, isKV := c.(*KVCache)
	if !isKV || kc.latent || kc.st.b != 1 || from < 0 || to > kc.st.n || from >= to {
		return nil, nil, false
	}
	s := mlx.NewScope()
	defer s.Close()
	k = mlx.Detach(mlx.Copy(mlx.SliceAxis(kc.st.k, 2, from, to)))
	v = mlx.Detach(mlx.Copy(mlx.SliceAxis(kc.st.v, 2, from, to)))
	return k, v, true
}

// AppendKV appends keys and values [1, H, L, D] (from KVRange) to a float
// full-attention cache, as a forward pass would have; it reports false,
// changing nothing, for any other kind of cache.
func AppendKV(c Cache, k, v *mlx.Array) bool {
	kc, isKV := c.(*KVCache)
	if !isKV || kc.latent {
		return false
	}
	if err := kc.st.init(k, v); err != nil {
		return false
	}
	kc.st.appendKV(k, v)
	return true
}

// BatchRowKV is KVRange for row i of a batch cache: detached copies of
// that row's positions [from, to), [1, H, to-from, D], so a row leaving
// the batch can hand what it computed (its prompt and the tokens it
// generated) to a prefix cache. ok is false for any other cache, and
// where KVRange's is for the row's own cache.
func BatchRowKV(c Cache, i, from, to int) (k, v *mlx.Array, ok bool) {
	bc, isBatch := c.(*BatchCache)
	if !isBatch || i < 0 || i >= len(bc.rows) {
		return nil, nil, false
	}
	return KVRange(bc.rows[i], from, to)
}
