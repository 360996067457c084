package nn

// BatchCacheBound is the most a BatchCache holds for rows that reach the
// given lengths (positions each), at perPosition bytes of keys and values
// per position across the layers: every row holds the widest row's
// columns (left padding) and storage grows growStep columns at a time.
// A row that left keeps its columns until the next compaction, which this
// does not count.
func BatchCacheBound(perPosition int64, lengths []int) int64 {
	if len(lengths) == 0 {
		return 0
	}
	widest := 0
	for _, n := range lengths {
		widest = max(widest, n)
	}
	return int64(len(lengths)) * int64(widest+growStep) * perPosition
}
