package vad

// Map takes times on the speech-only timeline (the regions laid end to
// end, which is what Whisper decodes) back to the recording's timeline.
// Times are in seconds; the arithmetic is exact in samples, so a time maps
// to the same sample offset it had in its region.
type Map struct {
	regions []Region
	at      []int64 // where each region starts on the speech timeline
	total   int64
}

// NewMap builds the map for regions (sorted, disjoint).
func NewMap(regions []Region) *Map {
	m := &Map{regions: regions, at: make([]int64, len(regions))}
	for i, r := range regions {
		m.at[i] = m.total
		m.total += r.End - r.Start
	}
	return m
}

// Samples is the length of the speech timeline.
func (m *Map) Samples() int64 { return m.total }

// Regions are the speech regions on the recording's timeline.
func (m *Map) Regions() []Region { return m.regions }

func (m *Map) shift(sec float64, i int) float64 {
	if len(m.regions) == 0 {
		return sec
	}
	return sec + float64(m.regions[i].Start-m.at[i])/SampleRate
}

// Start maps a time that begins something: at a join between regions it
// belongs to the later region (so a segment starting there starts after
// the skipped silence).
func (m *Map) Start(sec float64) float64 { return m.shift(sec, m.Index(sec, false)) }

// End maps a time that ends something: at a join it belongs to the
// earlier region (so a segment ending there ends before the silence).
func (m *Map) End(sec float64) float64 { return m.shift(sec, m.Index(sec, true)) }

// Shift maps sec as if it were in region i.
func (m *Map) Shift(sec float64, i int) float64 { return m.shift(sec, i) }

// Index is the region holding sec on the speech timeline; end says which
// side a join belongs to. Times before the first or past the last region
// (Whisper's times can run past the audio) clamp to it.
func (m *Map) Index(sec float64, end bool) int {
	s := sec * SampleRate
	lo, hi := 0, len(m.regions)-1
	if hi < 0 {
		return 0
	}
	// the last region whose start is before s (end) or at or before s.
	for lo < hi {
		mid := (lo + hi + 1) / 2
		start := float64(m.at[mid])
		if start < s || (!end && start == s) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Gaps are the parts of a recording of n samples outside the regions.
func Gaps(regions []Region, n int64) []Region {
	var out []Region
	var at int64
	for _, r := range regions {
		if r.Start > at {
			out = append(out, Region{Start: at, End: r.Start})
		}
		at = max(at, r.End)
	}
	if at < n {
		out = append(out, Region{Start: at, End: n})
	}
	return out
}
