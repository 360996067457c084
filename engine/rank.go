package engine

import "math"

// ranker orders token ids by logit, most likely first and equal logits by
// id: the order draw walks. Sorting a 150k-token vocabulary with
// sort.Slice took about 25 ms, twice a whole decode step of a 0.5B model,
// for every sampled token. A stable radix sort of the logits' bits gives
// the same order in about a millisecond; its buffers are kept between
// tokens.
type ranker struct {
	keys, keys2 []uint32
	ids, ids2   []int32
}

// rank writes the ids 0..len(logits)-1 into order (of the same length) in
// that order and reports true. With a NaN logit, which has no place in
// it, it reports false and leaves order alone.
func (r *ranker) rank(logits []float32, order []int) bool {
	n := len(logits)
	if cap(r.keys) < n {
		r.keys, r.keys2 = make([]uint32, n), make([]uint32, n)
		r.ids, r.ids2 = make([]int32, n), make([]int32, n)
	}
	keys, keys2, ids, ids2 := r.keys[:n], r.keys2[:n], r.ids[:n], r.ids2[:n]
	for i, l := range logits {
		if l != l {
			return false
		}
		b := math.Float32bits(l)
		if b == 1<<31 {
			b = 0 // -0 equals +0, as the logits compare
		}
		// Flip so that unsigned order is float order, then invert it:
		// the most likely token gets the smallest key.
		if b&(1<<31) != 0 {
			b = ^b
		} else {
			b |= 1 << 31
		}
		keys[i], ids[i] = ^b, int32(i)
	}
	// Least significant byte first; each pass is stable, so equal keys
	// keep ascending ids. A byte every key shares needs no pass.
	for shift := 0; shift < 32 && n > 0; shift += 8 {
		var start [256]int
		for _, k := range keys {
			start[k>>shift&0xFF]++
		}
		if start[keys[0]>>shift&0xFF] == n {
			continue
		}
		at := 0
		for d, c := range start {
			start[d] = at
			at += c
		}
		for i, k := range keys {
			d := k >> shift & 0xFF
			keys2[start[d]], ids2[start[d]] = k, ids[i]
			start[d]++
		}
		keys, keys2, ids, ids2 = keys2, keys, ids2, ids
	}
	for i, id := range ids {
		order[i] = int(id)
	}
	return true
}
