package grammar

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"hark/engine"
)

// Grammar is a compiled schema bound to a vocabulary. It is read-only:
// Start makes the state of one generation.
type Grammar struct {
	root  *node
	vocab *Vocab
}

// Compile compiles a JSON Schema for vocab. Unsupported keywords, and
// schemas no value can satisfy, are errors that name them.
func Compile(schema []byte, vocab *Vocab) (*Grammar, error) {
	n, err := compileSchema(schema)
	if err != nil {
		return nil, err
	}
	return &Grammar{root: n, vocab: vocab}, nil
}

// JSONObject is the grammar of any JSON object (OpenAI's json_object).
func JSONObject(vocab *Vocab) *Grammar {
	g, err := Compile([]byte(`{"type":"object"}`), vocab)
	if err != nil {
		panic(err) // a constant schema
	}
	return g
}

// State follows one generation through the grammar. It implements
// engine.Constraint.
type State struct {
	g       *Grammar
	threads []thread
	written int // bytes accepted, for error messages
	cache   map[cacheKey]*mask
	scratch [][]thread
	cur     *mask // being filled by walk
	limit   int   // walk: the largest dist a token may leave (-1: any)
}

var _ engine.Constraint = (*State)(nil)

type cacheKey struct {
	f    frame
	rest *stack
}

// mask is the set of tokens allowed in one state.
type mask struct {
	allowed  []uint64
	any      bool
	maxAfter int // the largest dist a token leaves: over budget, recompute
	minAfter int // the smallest
}

// maxCache bounds the masks kept per generation (each is vocab/8 bytes).
const maxCache = 256

// Start begins a document.
func (g *Grammar) Start() *State {
	return &State{g: g, threads: []thread{{f: frame{n: g.root}}}, cache: map[cacheKey]*mask{}}
}

// Mask implements engine.Constraint.
func (s *State) Mask(logits []float32, budget int) error {
	if len(s.threads) == 0 {
		return errors.New("grammar dead end")
	}
	m := s.allowed(budget)
	if !m.any && !s.Complete() {
		return fmt.Errorf("grammar dead end after %d bytes: no token continues the document", s.written)
	}
	inf := float32(math.Inf(-1))
	for w := 0; w*64 < len(logits); w++ {
		var word uint64
		if w < len(m.allowed) {
			word = m.allowed[w]
		}
		if word == ^uint64(0) {
			continue
		}
		end := min(w*64+64, len(logits))
		for i := w * 64; i < end; i++ {
			if word&(1<<uint(i-w*64)) == 0 {
				logits[i] = inf
			}
		}
	}
	return nil
}

// Allowed lists the tokens allowed next (for tests and tools).
func (s *State) Allowed(budget int) []int {
	m := s.allowed(budget)
	var out []int
	for w, word := range m.allowed {
		for ; word != 0; word &= word - 1 {
			out = append(out, w*64+bits.TrailingZeros64(word))
		}
	}
	return out
}

func (s *State) allowed(budget int) *mask {
	var key cacheKey
	cacheable := len(s.threads) == 1
	if cacheable {
		key = cacheKey{s.threads[0].f, s.threads[0].rest}
		// A string's length matters only up to its bounds: without them,
		// every character would make a new key and miss the cache.
		if n := key.f.n; n != nil && n.kind == kString && n.maxLen < 0 {
			key.f.count = min(key.f.count, int32(n.minLen))
		}
	}
	m := s.cache[key]
	if !cacheable || m == nil {
		m = s.walk(-1)
		if cacheable {
			if len(s.cache) >= maxCache {
				clear(s.cache)
			}
			s.cache[key] = m
		}
	}
	if budget > 0 && m.maxAfter > budget-1 {
		// Near the end of the budget: only tokens that leave a document
		// that can still be closed in time.
		// Dist counts bytes, an upper bound on tokens: when no token fits
		// (the schema needs more bytes than tokens are left, which multi-
		// byte tokens may still manage), close as fast as possible.
		if tight := s.walk(budget - 1); tight.any {
			m = tight
		} else {
			m = s.walk(s.walk(-2).minAfter)
		}
	}
	return m
}

func (s *State) walk(limit int) *mask {
	v := s.g.vocab
	s.cur = &mask{allowed: make([]uint64, (v.size+63)/64), minAfter: infinite}
	s.limit = limit
	if room, ok := s.freeString(); ok && limit == -1 {
		// Plain tokens only add characters: allowed while they fit (a
		// bounded string leaves out the rare tokens over maxPlainChars).
		copy(s.cur.allowed, v.plainUpTo[room])
		d := s.threads[0].dist()
		s.cur.any = room > 0
		s.cur.maxAfter, s.cur.minAfter = d, max(0, d-maxPlainChars)
		s.visit(&v.other, 0, s.threads, 0)
		return s.cur
	}
	s.visit(&v.all, 0, s.threads, 0)
	return s.cur
}

// freeString reports whether the state is inside a string with no
// pattern, at a character boundary, and how many characters still fit.
func (s *State) freeString() (room int, ok bool) {
	if len(s.threads) != 1 {
		return 0, false
	}
	f := &s.threads[0].f
	if f.n == nil || f.n.kind != kString || f.phase != sIn || f.n.re != nil || f.u8need != 0 {
		return 0, false
	}
	if f.n.maxLen < 0 {
		return maxPlainChars, true
	}
	return min(f.n.maxLen-int(f.count), maxPlainChars-1), true
}

func (s *State) visit(v *flatTrie, node int32, threads []thread, depth int) {
	for len(s.scratch) <= depth+1 {
		s.scratch = append(s.scratch, nil)
	}
	for e := v.edgeStart[node]; e < v.edgeStart[node+1]; e++ {
		b, child := v.edgeByte[e], v.edgeNode[e]
		next := s.scratch[depth+1][:0]
		for _, t := range threads {
			next = step(t, b, next)
		}
		s.scratch[depth+1] = next
		if len(next) == 0 {
			continue
		}
		next = dedup(next)
		if ts, te := v.tokStart[child], v.tokStart[child+1]; ts < te {
			d := infinite
			for i := range next {
				d = min(d, next[i].dist())
			}
			s.cur.minAfter = min(s.cur.minAfter, d)
			if s.limit < 0 || d <= s.limit {
				for _, id := range v.tokID[ts:te] {
					s.cur.allowed[id/64] |= 1 << uint(id%64)
				}
				s.cur.any = true
				s.cur.maxAfter = max(s.cur.maxAfter, d)
			}
		}
		s.visit(v, child, next, depth+1)
		// The recursion may have grown the slice; keep the larger buffer.
		if cap(s.scratch[depth+1]) < cap(next) {
			s.scratch[depth+1] = next[:0]
		}
	}
}

// Advance implements engine.Constraint.
func (s *State) Advance(tok int) error {
	if tok < 0 || tok >= len(s.g.vocab.text) || s.g.vocab.text[tok] == nil {
		return fmt.Errorf("token %d writes no text, so it cannot continue the document", tok)
	}
	ts := s.threads
	for _, b := range s.g.vocab.text[tok] {
		var next []thread
		for _, t := range ts {
			next = step(t, b, next)
		}
		ts = dedup(next)
		if len(ts) == 0 {
			return fmt.Errorf("token %d (%q) does not continue the document after %d bytes", tok, s.g.vocab.text[tok], s.written)
		}
	}
	s.threads = ts
	s.written += len(s.g.vocab.text[tok])
	return nil
}

// Complete implements engine.Constraint.
func (s *State) Complete() bool {
	for i := range s.threads {
		if s.threads[i].canEnd() {
			return true
		}
	}
	return false
}

// Final implements engine.Constraint.
func (s *State) Final() bool {
	for i := range s.threads {
		if !s.threads[i].final() {
			return false
		}
	}
	return len(s.threads) > 0
}

// Accepts reports whether text is a document the grammar can write in
// full (for tests: the grammar's language, byte by byte).
func (g *Grammar) Accepts(text []byte) bool {
	ts := []thread{{f: frame{n: g.root}}}
	for _, b := range text {
		var next []thread
		for _, t := range ts {
			next = step(t, b, next)
		}
		ts = dedup(next)
		if len(ts) == 0 {
			return false
		}
	}
	for i := range ts {
		if ts[i].canEnd() {
			return true
		}
	}
	return false
}
