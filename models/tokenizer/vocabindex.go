package tokenizer

import (
	"hash/maphash"
	"math/bits"
)

// vocabIndex maps token strings to ids. Loading a 151k-token vocabulary
// and its 151k merges does about 600k lookups and inserts; in a Go map
// (24-byte slots, one string allocation per key) they were the larger part
// of the load. Here the keys are substrings of one string, and the table
// is 8-byte slots (the top of the key's hash, and the entry) probed
// linearly, so a lookup usually touches one slot and one key. The hash is
// seeded per index, so a crafted file cannot make the probes collide.
type vocabIndex struct {
	seed  maphash.Seed
	ents  []vocabEntry
	slots []uint64 // hash>>32<<32 | entry+1; 0 is empty
	shift uint     // 64 - log2(len(slots))
}

// vocabEntry keeps a key and its id in one cache line.
type vocabEntry struct {
	key string
	id  int32
}

// newVocabIndex makes an index sized for n tokens.
func newVocabIndex(n int) *vocabIndex {
	v := &vocabIndex{seed: maphash.MakeSeed(), ents: make([]vocabEntry, 0, n)}
	v.grow(max(n, 8))
	return v
}

// grow rebuilds the table for at least n entries at a load of at most 2/3.
func (v *vocabIndex) grow(n int) {
	size := 1 << bits.Len(uint(n+n/2))
	v.slots = make([]uint64, size)
	v.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for e, en := range v.ents {
		h := maphash.String(v.seed, en.key)
		for i := h >> v.shift; ; i = (i + 1) & uint64(size-1) {
			if v.slots[i] == 0 {
				v.slots[i] = h>>32<<32 | uint64(e+1)
				break
			}
		}
	}
}

// find returns the slot of key (hashed h), or of the empty slot where it
// would go, and whether it is there.
func (v *vocabIndex) find(h uint64, key string) (uint64, bool) {
	tag := h >> 32 << 32
	mask := uint64(len(v.slots) - 1)
	for i := h >> v.shift; ; i = (i + 1) & mask {
		s := v.slots[i]
		if s == 0 {
			return i, false
		}
		if s&^0xffffffff == tag && v.ents[uint32(s)-1].key == key {
			return i, true
		}
	}
}

// findBytes is find for a key held in bytes (no conversion is allocated).
func (v *vocabIndex) findBytes(h uint64, key []byte) (uint64, bool) {
	tag := h >> 32 << 32
	mask := uint64(len(v.slots) - 1)
	for i := h >> v.shift; ; i = (i + 1) & mask {
		s := v.slots[i]
		if s == 0 {
			return i, false
		}
		if s&^0xffffffff == tag && v.ents[uint32(s)-1].key == string(key) {
			return i, true
		}
	}
}

// get returns the id of token s.
func (v *vocabIndex) get(s string) (int, bool) {
	i, ok := v.find(maphash.String(v.seed, s), s)
	if !ok {
		return 0, false
	}
	return int(v.ents[uint32(v.slots[i])-1].id), true
}

// getBytes is get for a token held in bytes.
func (v *vocabIndex) getBytes(b []byte) (int, bool) {
	i, ok := v.findBytes(maphash.Bytes(v.seed, b), b)
	if !ok {
		return 0, false
	}
	return int(v.ents[uint32(v.slots[i])-1].id), true
}

// set maps s to id, replacing an earlier id of s (the last of duplicate
// JSON keys wins, as when decoding into a map).
func (v *vocabIndex) set(s string, id int) {
	h := maphash.String(v.seed, s)
	i, ok := v.find(h, s)
	if ok {
		v.ents[uint32(v.slots[i])-1].id = int32(id)
		return
	}
	v.ents = append(v.ents, vocabEntry{s, int32(id)})
	if 3*len(v.ents) > 2*len(v.slots) {
		v.grow(2 * len(v.ents))
		return
	}
	v.slots[i] = h>>32<<32 | uint64(len(v.ents))
}

// len is the number of distinct tokens.
func (v *vocabIndex) len() int { return len(v.ents) }

// each calls fn for every token and its id.
func (v *vocabIndex) each(fn func(tok string, id int)) {
	for _, e := range v.ents {
		fn(e.key, int(e.id))
	}
}
