package tokenizer

import (
	"container/heap"
	"fmt"
	"sync"
	"unicode/utf8"
)

// bpe is a Hugging Face BPE model: a vocabulary plus ranked merges. It serves
// both GPT-2-style byte-level vocabularies (whose "characters" are the
// visible byte runes) and SentencePiece-style ones with byte fallback.
type bpe struct {
	vocab        *vocabIndex
	tokens       []string // id -> token; "" for holes
	merges       map[uint64]merge
	unk          int // -1 when the model has no unknown token
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	byteIDs      [256]int // <0xXX> token ids for byte fallback, -1 if absent

	joinBuf []byte // scratch for addMerge

	mu    sync.RWMutex
	cache map[string][]int
}

type merge struct {
	rank int32
	id   int32
}

func pairKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// cacheLimit bounds the word cache: pre-tokenized words repeat a lot in real
// text, but a long-running app must not grow without bound.
const (
	cacheLimit   = 1 << 16
	cacheWordMax = 256 // bytes; longer words are rarely repeated
)

func newBPE(vocab *vocabIndex) *bpe {
	m := &bpe{vocab: vocab, unk: -1, merges: map[uint64]merge{}, cache: map[string][]int{}}
	max := -1
	vocab.each(func(_ string, id int) {
		if id > max {
			max = id
		}
	})
	m.tokens = make([]string, max+1)
	vocab.each(func(t string, id int) {
		if id >= 0 {
			m.tokens[id] = t
		}
	})
	for b := 0; b < 256; b++ {
		m.byteIDs[b] = -1
		if id, ok := vocab.get(fmt.Sprintf("<0x%02X>", b)); ok {
			m.byteIDs[b] = id
		}
	}
	return m
}

// addMerge registers the merge of a and b at the given rank. Merges whose
// parts or result are missing from the vocabulary are an error, as in HF.
func (m *bpe) addMerge(a, b []byte, rank int) error {
	ia, ok1 := m.vocab.getBytes(a)
	ib, ok2 := m.vocab.getBytes(b)
	if !ok1 || !ok2 {
		return fmt.Errorf("merge %d (%q %q): token not in vocab", rank, a, b)
	}
	m.joinBuf = append(append(m.joinBuf[:0], a...), b...)
	id, ok := m.vocab.getBytes(m.joinBuf)
	if !ok {
		return fmt.Errorf("merge %d (%q %q): result %q not in vocab", rank, a, b, m.joinBuf)
	}
	k := pairKey(ia, ib)
	if _, dup := m.merges[k]; !dup {
		m.merges[k] = merge{rank: int32(rank), id: int32(id)}
	}
	return nil
}

// tokenize appends the ids of one pre-tokenized word.
func (m *bpe) tokenize(dst []int, word string) []int {
	if word == "" {
		return dst
	}
	if m.ignoreMerges {
		if id, ok := m.vocab.get(word); ok {
			return append(dst, id)
		}
	}
	cacheable := len(word) <= cacheWordMax
	if cacheable {
		m.mu.RLock()
		ids, ok := m.cache[word]
		m.mu.RUnlock()
		if ok {
			return append(dst, ids...)
		}
	}
	ids := mergeSymbols(m.merges, m.symbols(word))
	if cacheable {
		m.mu.Lock()
		if len(m.cache) >= cacheLimit {
			m.cache = map[string][]int{}
		}
		m.cache[word] = ids
		m.mu.Unlock()
	}
	return append(dst, ids...)
}

// symbols splits a word into initial symbols: one per character, byte
// fallback tokens for characters missing from the vocabulary, else unk.
func (m *bpe) symbols(word string) []int {
	ids := make([]int, 0, len(word))
	lastUnk := false
	for i := 0; i < len(word); {
		_, w := utf8.DecodeRuneInString(word[i:])
		ch := word[i : i+w]
		i += w
		if id, ok := m.vocab.get(ch); ok {
			ids = append(ids, id)
			lastUnk = false
			continue
		}
		if m.byteFallback && m.hasBytes(ch) {
			for j := 0; j < len(ch); j++ {
				ids = append(ids, m.byteIDs[ch[j]])
			}
			lastUnk = false
			continue
		}
		if m.unk >= 0 {
			if !(m.fuseUnk && lastUnk) {
				ids = append(ids, m.unk)
			}
			lastUnk = true
		}
	}
	return ids
}

func (m *bpe) hasBytes(ch string) bool {
	for j := 0; j < len(ch); j++ {
		if m.byteIDs[ch[j]] < 0 {
			return false
		}
	}
	return true
}

// candidate is a possible merge of the symbol at pos with its right
// neighbour; a and b record the pair so stale entries can be recognised.
type candidate struct {
	rank, pos int32
	a, b      int32
}

type candHeap []candidate

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos // ties merge leftmost first, as HF does
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeSymbols applies merges lowest rank first using a heap over a linked
// list of symbols, so long words (SentencePiece treats a whole line as one
// word) stay O(n log n).
func mergeSymbols(merges map[uint64]merge, ids []int) []int {
	n := len(ids)
	if n < 2 {
		return ids
	}
	next := make([]int32, n)
	prev := make([]int32, n)
	for i := range ids {
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
	}
	h := make(candHeap, 0, n)
	push := func(i int32) {
		j := next[i]
		if int(j) >= n {
			return
		}
		if mg, ok := merges[pairKey(ids[i], ids[j])]; ok {
			heap.Push(&h, candidate{rank: mg.rank, pos: i, a: int32(ids[i]), b: int32(ids[j])})
		}
	}
	for i := 0; i < n-1; i++ {
		push(int32(i))
	}
	dead := make([]bool, n)
	for h.Len() > 0 {
		c := heap.Pop(&h).(candidate)
		i := c.pos
		if dead[i] {
			continue
		}
		j := next[i]
		if int(j) >= n || ids[i] != int(c.a) || ids[j] != int(c.b) {
			continue
		}
		ids[i] = int(merges[pairKey(int(c.a), int(c.b))].id)
		dead[j] = true
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		if prev[i] >= 0 {
			push(prev[i])
		}
		push(i)
	}
	out := make([]int, 0, n)
	for i := 0; i < n; i = int(next[i]) {
		out = append(out, ids[i])
	}
	return out
}
