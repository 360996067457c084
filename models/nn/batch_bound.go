package nn

// BatchCacheBound is the most a BatchCache holds for rows that reach the
// given lengths (positions each), at perPosition bytes of keys and values
// per position across the layers: each row keeps its own cache, whose
// storage grows growStep positions at a time.
func BatchCacheBound(perPosition int64, lengths []int) int64 {
	var n int64
	for _, l := range lengths {
		n += int64((l+growStep-1)/growStep*growStep) * perPosition
	}
	return n
}
