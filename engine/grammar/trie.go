package grammar

import "math"

// trie holds a small set of byte strings (enum values, object keys), walked
// one byte at a time by the matcher.
type trie struct {
	nodes []trieNode
}

type trieNode struct {
	next  map[byte]int32
	value int32  // terminal: the value given to add; -1: not terminal
	below uint64 // bit v%64 for every terminal value in this subtree
	depth int32
	rest  int32 // bytes of the shortest way down to a terminal
}

func newTrie() *trie { return &trie{nodes: []trieNode{{value: -1}}} }

func (t *trie) add(s []byte, value int) {
	n := int32(0)
	t.nodes[0].below |= 1 << uint(value%64)
	for i, c := range s {
		nx, ok := t.nodes[n].next[c]
		if !ok {
			nx = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{value: -1, depth: int32(i + 1)})
			if t.nodes[n].next == nil {
				t.nodes[n].next = map[byte]int32{}
			}
			t.nodes[n].next[c] = nx
		}
		n = nx
		t.nodes[n].below |= 1 << uint(value%64)
	}
	t.nodes[n].value = int32(value)
	t.fixRest()
}

// fixRest recomputes each node's shortest distance to a terminal.
func (t *trie) fixRest() {
	for i := len(t.nodes) - 1; i >= 0; i-- {
		r := int32(math.MaxInt32 / 2)
		if t.nodes[i].value >= 0 {
			r = 0
		}
		for _, c := range t.nodes[i].next {
			// Children always come after their parent.
			r = min(r, t.nodes[c].rest+1)
		}
		t.nodes[i].rest = r
	}
}

func (t *trie) empty() bool { return t.nodes[0].value < 0 && len(t.nodes[0].next) == 0 }

// overlaps reports whether the two tries share a string.
func (t *trie) overlaps(o *trie) bool {
	var walk func(a, b int32) bool
	walk = func(a, b int32) bool {
		if t.nodes[a].value >= 0 && o.nodes[b].value >= 0 {
			return true
		}
		for c, na := range t.nodes[a].next {
			if nb, ok := o.nodes[b].next[c]; ok && walk(na, nb) {
				return true
			}
		}
		return false
	}
	return walk(0, 0)
}

// size computes minSize, the bytes of the shortest valid value of n
// (infinite when there is none), memoised on the node.
func (n *node) size() int {
	if n.sized {
		return n.minSize
	}
	if n.sizing {
		return infinite // a cycle: free-form JSON, always optional
	}
	n.sizing = true
	s := infinite
	switch n.kind {
	case kString:
		s = 2 + n.minLen
		if n.re != nil {
			s = 2 + int(n.re.dist[0])
			if n.re.dist[0] < 0 {
				s = infinite
			}
		}
	case kNumber:
		s = numSize(n)
	case kLiteral:
		if !n.lit.empty() {
			s = int(n.lit.nodes[0].rest)
		}
	case kArray:
		s = 2
		if n.minItems > 0 {
			s = add(s, mul(n.minItems, n.items.size()), n.minItems-1)
		}
	case kObject:
		s = 2
		k := 0
		for i, p := range n.props {
			if n.required&(1<<uint(i)) != 0 {
				s = add(s, len(p.key)+1, p.n.size())
				k++
			}
		}
		if k > 1 {
			s = add(s, k-1)
		}
	case kAnyOf:
		for _, a := range n.alts {
			s = min(s, a.size())
		}
	}
	n.minSize, n.sized, n.sizing = s, true, false
	return s
}

func add(xs ...int) int {
	t := 0
	for _, x := range xs {
		if x >= infinite || t+x >= infinite {
			return infinite
		}
		t += x
	}
	return t
}

func mul(k, x int) int {
	if x >= infinite || (x > 0 && k > infinite/x) {
		return infinite
	}
	return k * x
}
