package grammar

import (
	"bytes"
	"sort"

	"hark/models/tokenizer"
)

// Vocab is a model's vocabulary as bytes, in a trie: tokens that share a
// prefix share the matcher's work on it, so a step walks each distinct
// prefix once and stops at the first byte the grammar refuses. Build it
// once per model; it is read-only and safe to share.
type Vocab struct {
	size int // logits per row (may exceed the tokenizer's ids)
	// Flat trie: node i's edges are edgeByte/edgeNode[edgeStart[i]:edgeStart[i+1]],
	// the tokens ending there tokID[tokStart[i]:tokStart[i+1]].
	edgeStart []int32
	edgeByte  []byte
	edgeNode  []int32
	tokStart  []int32
	tokID     []int32
	// Bytes of each token (nil: never allowed, e.g. special tokens).
	text [][]byte
}

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
	// A pointer trie first (children in byte order, thanks to the sort),
	// then flattened in creation order.
	type tnode struct {
		edges []int32 // child node indexes
		b     byte    // the byte into this node
		toks  []int32
	}
	nodes := []tnode{{}}
	var path []int32 // path[i]: node after i+1 bytes of the previous token
	var prev []byte
	for _, id := range ids {
		t := v.text[id]
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
			nx := int32(len(nodes))
			nodes = append(nodes, tnode{b: c})
			nodes[cur].edges = append(nodes[cur].edges, nx)
			path = append(path, nx)
			cur = nx
		}
		nodes[cur].toks = append(nodes[cur].toks, id)
		prev = t
	}
	v.edgeStart = make([]int32, len(nodes)+1)
	v.tokStart = make([]int32, len(nodes)+1)
	for i, nd := range nodes {
		v.edgeStart[i+1] = v.edgeStart[i] + int32(len(nd.edges))
		v.tokStart[i+1] = v.tokStart[i] + int32(len(nd.toks))
		for _, e := range nd.edges {
			v.edgeByte = append(v.edgeByte, nodes[e].b)
			v.edgeNode = append(v.edgeNode, e)
		}
		v.tokID = append(v.tokID, nd.toks...)
	}
	return v
}
