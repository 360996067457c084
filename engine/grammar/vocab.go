package grammar

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"hark/models/tokenizer"
)

// Vocab is a model's vocabulary as bytes, in a trie: tokens that share a
// prefix share the matcher's work on it, so a step walks each distinct
// prefix once and stops at the first byte the grammar refuses. Build it
// once per model; it is read-only and safe to share.
type Vocab struct {
	size int // logits per row (may exceed the tokenizer's ids)
	all  flatTrie
	// Inside a free-form string, most tokens are plain text: printable
	// characters, no quote, backslash or control byte, whole UTF-8
	// characters. Those are allowed by bitset (plainUpTo[k]: plain tokens
	// of at most k characters; the last entry holds them all) and only
	// the others are walked, in their own trie.
	plainUpTo [][]uint64
	other     flatTrie
	// Bytes of each token (nil: never allowed, e.g. special tokens).
	text [][]byte
}

// flatTrie: node i's edges are edgeByte/edgeNode[edgeStart[i]:edgeStart[i+1]],
// the tokens ending there tokID[tokStart[i]:tokStart[i+1]].
type flatTrie struct {
	edgeStart []int32
	edgeByte  []byte
	edgeNode  []int32
	tokStart  []int32
	tokID     []int32
}

// maxPlainChars is the longest plain token tracked by length; longer ones
// count as this long (a maxLength near the end then walks them).
const maxPlainChars = 48

// NewVocab reads every id below size from tok.
func NewVocab(tok *tokenizer.Tokenizer, size int) *Vocab {
	v := &Vocab{size: size, text: make([][]byte, size)}
	ids := make([]int32, 0, size)
	for id := 0; id < size; id++ {
		if b, ok := tok.TokenBytes(id); ok && len(b) > 0 {
			v.text[id] = b
			ids = append(ids, int32(id))
		}
	}
	return v.build(ids)
}

// NewVocabBytes is NewVocab for a vocabulary given directly as bytes (tests).
func NewVocabBytes(tokens [][]byte) *Vocab {
	v := &Vocab{size: len(tokens), text: tokens}
	var ids []int32
	for id, b := range tokens {
		if len(b) > 0 {
			ids = append(ids, int32(id))
		}
	}
	return v.build(ids)
}

// Size is the number of logits the vocabulary covers.
func (v *Vocab) Size() int { return v.size }

func (v *Vocab) build(ids []int32) *Vocab {
	sort.Slice(ids, func(i, j int) bool {
		if c := bytes.Compare(v.text[ids[i]], v.text[ids[j]]); c != 0 {
			return c < 0
		}
		return ids[i] < ids[j]
	})
	words := (v.size + 63) / 64
	v.plainUpTo = make([][]uint64, maxPlainChars+1)
	for k := range v.plainUpTo {
		v.plainUpTo[k] = make([]uint64, words)
	}
	var other []int32
	for _, id := range ids {
		n, ok := plainChars(v.text[id])
		if !ok {
			other = append(other, id)
			continue
		}
		for k := min(n, maxPlainChars); k <= maxPlainChars; k++ {
			v.plainUpTo[k][id/64] |= 1 << uint(id%64)
		}
	}
	v.all = buildTrie(v.text, ids)
	v.other = buildTrie(v.text, other)
	return v
}

// plainChars counts the characters of a plain-text token.
func plainChars(b []byte) (int, bool) {
	if !utf8.Valid(b) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			return 0, false
		}
		if c < 0x80 || c >= 0xC0 {
			n++
		}
	}
	return n, true
}

// buildTrie lays out the tokens ids (sorted by bytes) as a flat trie.
// Nodes are made in sorted order, so each node's children come in byte
// order; parents and counts then place them without per-node slices.
func buildTrie(text [][]byte, ids []int32) flatTrie {
	parent := []int32{-1}
	into := []byte{0}
	tokNode := make([]int32, len(ids))
	var path []int32 // path[i]: node after i+1 bytes of the previous token
	var prev []byte
	for i, id := range ids {
		t := text[id]
		lcp := 0
		for lcp < len(t) && lcp < len(prev) && t[lcp] == prev[lcp] {
			lcp++
		}
		path = path[:lcp]
		cur := int32(0)
		if lcp > 0 {
			cur = path[lcp-1]
		}
		for _, c := range t[lcp:] {
			nx := int32(len(parent))
			parent = append(parent, cur)
			into = append(into, c)
			path = append(path, nx)
			cur = nx
		}
		tokNode[i] = cur
		prev = t
	}
	n := len(parent)
	v := flatTrie{
		edgeStart: make([]int32, n+1), tokStart: make([]int32, n+1),
		edgeByte: make([]byte, n-1), edgeNode: make([]int32, n-1), tokID: make([]int32, len(ids)),
	}
	for i := 1; i < n; i++ {
		v.edgeStart[parent[i]+1]++
	}
	for _, nd := range tokNode {
		v.tokStart[nd+1]++
	}
	for i := 0; i < n; i++ {
		v.edgeStart[i+1] += v.edgeStart[i]
		v.tokStart[i+1] += v.tokStart[i]
	}
	fillE := append([]int32(nil), v.edgeStart[:n]...)
	for i := 1; i < n; i++ {
		p := parent[i]
		v.edgeByte[fillE[p]], v.edgeNode[fillE[p]] = into[i], int32(i)
		fillE[p]++
	}
	fillT := append([]int32(nil), v.tokStart[:n]...)
	for i, nd := range tokNode {
		v.tokID[fillT[nd]] = ids[i]
		fillT[nd]++
	}
	return v
}
