package grammar

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The pattern subset (ECMAScript syntax, matched as JSON Schema does: a
// search, unless anchored):
//
//   - literal ASCII characters, and escaped punctuation such as \. \( \\ \/;
//   - . (any ASCII character but \n and \r), \d \D \w \W \s \S, \t \n \r \f \v;
//   - classes [abc], [a-z0-9_], [^...], with the escapes above inside;
//   - groups (...) and (?:...), alternation |;
//   - quantifiers * + ? {n} {n,} {n,m}, greedy or lazy (the same language);
//   - ^ at the very start and $ at the very end.
//
// Strings written under a pattern are ASCII: a negated class or \D never
// produces other characters (a subset of what the pattern allows, which is
// all generation needs). Anything else (backreferences, lookaround, \b,
// non-ASCII literals, anchors elsewhere) is refused by name.

const (
	maxPatternBytes = 1000
	maxNFAStates    = 10000
	maxDFAStates    = 2000
	maxRepeat       = 1000
)

type charSet [2]uint64 // ASCII bits

func (s *charSet) add(lo, hi byte) {
	for c := int(lo); c <= int(hi) && c < 128; c++ {
		s[c/64] |= 1 << uint(c%64)
	}
}
func (s charSet) has(c byte) bool { return c < 128 && s[c/64]&(1<<uint(c%64)) != 0 }
func (s charSet) not() charSet    { return charSet{^s[0], ^s[1]} }
func (s charSet) or(o charSet) charSet {
	return charSet{s[0] | o[0], s[1] | o[1]}
}

type nfaState struct {
	set  charSet
	out  int // on a char of set (-1: none)
	eps  []int
	term bool
}

type nfa struct{ st []nfaState }

func (a *nfa) state() (int, error) {
	if len(a.st) >= maxNFAStates {
		return 0, fmt.Errorf("too large once repetitions are expanded (over %d states)", maxNFAStates)
	}
	a.st = append(a.st, nfaState{out: -1})
	return len(a.st) - 1, nil
}

// frag is a piece of NFA with one entry and one exit state.
type frag struct{ in, out int }

// ast nodes of the pattern.
type reNode struct {
	op       byte // 'c' chars, '.' concat, '|' alt, '*' repeat, 'e' empty
	set      charSet
	subs     []*reNode
	min, max int // repeat; max < 0: unbounded
}

type reParser struct {
	s   string
	pos int
}

var (
	digits  = func() (s charSet) { s.add('0', '9'); return }()
	words   = func() (s charSet) { s.add('0', '9'); s.add('a', 'z'); s.add('A', 'Z'); s.add('_', '_'); return }()
	spaces  = func() (s charSet) { s.add('\t', '\r'); s.add(' ', ' '); return }()
	anyChar = func() (s charSet) { s.add(0, 127); return }()
	dot     = func() (s charSet) { s = anyChar; s[0] &^= 1<<'\n' | 1<<'\r'; return }()
)

// build adds n to the NFA as a fragment.
func (a *nfa) build(n *reNode) (frag, error) {
	in, err := a.state()
	if err != nil {
		return frag{}, err
	}
	switch n.op {
	case 'e':
		return frag{in, in}, nil
	case 'c':
		out, err := a.state()
		if err != nil {
			return frag{}, err
		}
		a.st[in].set, a.st[in].out = n.set, out
		return frag{in, out}, nil
	case '.':
		cur := in
		for _, sub := range n.subs {
			f, err := a.build(sub)
			if err != nil {
				return frag{}, err
			}
			a.st[cur].eps = append(a.st[cur].eps, f.in)
			cur = f.out
		}
		return frag{in, cur}, nil
	case '|':
		out, err := a.state()
		if err != nil {
			return frag{}, err
		}
		for _, sub := range n.subs {
			f, err := a.build(sub)
			if err != nil {
				return frag{}, err
			}
			a.st[in].eps = append(a.st[in].eps, f.in)
			a.st[f.out].eps = append(a.st[f.out].eps, out)
		}
		return frag{in, out}, nil
	}
	// Repeat: min copies, then max-min optional ones (or a loop).
	cur := in
	sub := n.subs[0]
	for i := 0; i < n.min; i++ {
		f, err := a.build(sub)
		if err != nil {
			return frag{}, err
		}
		a.st[cur].eps = append(a.st[cur].eps, f.in)
		cur = f.out
	}
	out, err := a.state()
	if err != nil {
		return frag{}, err
	}
	if n.max < 0 {
		f, err := a.build(sub)
		if err != nil {
			return frag{}, err
		}
		a.st[cur].eps = append(a.st[cur].eps, f.in, out)
		a.st[f.out].eps = append(a.st[f.out].eps, cur)
		return frag{in, out}, nil
	}
	for i := n.min; i < n.max; i++ {
		f, err := a.build(sub)
		if err != nil {
			return frag{}, err
		}
		a.st[cur].eps = append(a.st[cur].eps, f.in, out)
		cur = f.out
	}
	a.st[cur].eps = append(a.st[cur].eps, out)
	return frag{in, out}, nil
}

// dfa is a pattern compiled for the matcher: state 0 is the start; next is
// -1 for a character that leads nowhere a match can still be reached.
type dfa struct {
	next   [][128]int32
	accept []bool
	dist   []int32 // characters to the nearest accepting state
}

func compilePattern(pat string) (*dfa, error) {
	work := 0
	return compilePatternWork(pat, &work)
}

// compilePatternWork charges its automaton work to *work, shared by all
// the patterns of one schema.
func compilePatternWork(pat string, work *int) (*dfa, error) {
	if len(pat) > maxPatternBytes {
		return nil, fmt.Errorf("longer than %d bytes", maxPatternBytes)
	}
	body := pat
	start, end := strings.HasPrefix(body, "^"), strings.HasSuffix(body, "$") && !strings.HasSuffix(body, `\$`)
	if start {
		body = body[1:]
	}
	if end {
		body = body[:len(body)-1]
	}
	p := &reParser{s: body}
	n, err := p.alt(0)
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.s) {
		return nil, p.errf("unbalanced )")
	}
	if n.op == '|' && (start || end) && len(n.subs) > 1 {
		// ^a|b$ anchors each branch apart; wrap it to be sure of intent.
		return nil, errors.New("anchors with a top-level | are ambiguous here: write ^(a|b)$")
	}
	seq := []*reNode{n}
	free := &reNode{op: '*', max: -1, subs: []*reNode{{op: 'c', set: anyChar}}}
	if !start {
		seq = append([]*reNode{free}, seq...)
	}
	if !end {
		seq = append(seq, free)
	}
	a := &nfa{}
	f, err := a.build(&reNode{op: '.', subs: seq})
	if err != nil {
		return nil, err
	}
	a.st[f.out].term = true
	return a.determinize(f.in, work)
}

// maxDFAWork bounds the subset construction (NFA states visited), so a
// pattern that explodes is refused in milliseconds, not minutes.
const maxDFAWork = 3_000_000

type determinizer struct {
	a     *nfa
	mark  []uint32 // visit stamps for closure
	stamp uint32
	work  int
}

func (d *determinizer) closure(set []int) ([]int, error) {
	d.stamp++
	stack := append([]int(nil), set...)
	var out []int
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.mark[s] == d.stamp {
			continue
		}
		d.mark[s] = d.stamp
		d.work++
		out = append(out, s)
		stack = append(stack, d.a.st[s].eps...)
	}
	if d.work > maxDFAWork {
		return nil, errors.New("too complex to compile (the automaton grows too large)")
	}
	sort.Ints(out)
	return out, nil
}

// byteClasses partitions ASCII into classes no NFA edge tells apart, so
// the construction runs once per class instead of once per character.
func (a *nfa) byteClasses() (rep []byte, class [128]int) {
	sig := map[string]int{}
	var sets []charSet
	seen := map[charSet]bool{}
	for _, st := range a.st {
		if st.out >= 0 && !seen[st.set] {
			seen[st.set] = true
			sets = append(sets, st.set)
		}
	}
	key := make([]byte, (len(sets)+7)/8)
	for c := 0; c < 128; c++ {
		clear(key)
		for i, s := range sets {
			if s.has(byte(c)) {
				key[i/8] |= 1 << uint(i%8)
			}
		}
		id, ok := sig[string(key)]
		if !ok {
			id = len(rep)
			sig[string(key)] = id
			rep = append(rep, byte(c))
		}
		class[c] = id
	}
	return rep, class
}

func setKey(s []int) string {
	b := make([]byte, 0, 4*len(s))
	for _, x := range s {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return string(b)
}

func (a *nfa) determinize(start int, work *int) (*dfa, error) {
	dt := &determinizer{a: a, mark: make([]uint32, len(a.st)), work: *work}
	defer func() { *work = dt.work }()
	rep, class := a.byteClasses()
	d := &dfa{}
	index := map[string]int32{}
	var sets [][]int
	addState := func(s []int) (int32, error) {
		k := setKey(s)
		if id, ok := index[k]; ok {
			return id, nil
		}
		if len(sets) >= maxDFAStates {
			return 0, fmt.Errorf("too complex (over %d automaton states)", maxDFAStates)
		}
		id := int32(len(sets))
		index[k] = id
		sets = append(sets, s)
		acc := false
		for _, x := range s {
			acc = acc || a.st[x].term
		}
		d.accept = append(d.accept, acc)
		d.next = append(d.next, [128]int32{})
		return id, nil
	}
	first, err := dt.closure([]int{start})
	if err != nil {
		return nil, err
	}
	if _, err := addState(first); err != nil {
		return nil, err
	}
	byClass := make([]int32, len(rep))
	for i := 0; i < len(sets); i++ {
		for ci, c := range rep {
			var to []int
			dt.work += len(sets[i])
			for _, x := range sets[i] {
				if a.st[x].out >= 0 && a.st[x].set.has(c) {
					to = append(to, a.st[x].out)
				}
			}
			byClass[ci] = -1
			if len(to) == 0 {
				continue
			}
			cl, err := dt.closure(to)
			if err != nil {
				return nil, err
			}
			id, err := addState(cl)
			if err != nil {
				return nil, err
			}
			byClass[ci] = id
		}
		for c := 0; c < 128; c++ {
			d.next[i][c] = byClass[class[c]]
		}
	}
	d.prune()
	if d.dist[0] < 0 {
		return nil, errors.New("matches no string")
	}
	return d, nil
}

// prune computes dist by a backward search from the accepting states, and
// cuts every transition into a state from which no match is reachable.
func (d *dfa) prune() {
	n := len(d.next)
	d.dist = make([]int32, n)
	for i := range d.dist {
		d.dist[i] = -1
	}
	var queue []int32
	for i, acc := range d.accept {
		if acc {
			d.dist[i] = 0
			queue = append(queue, int32(i))
		}
	}
	rev := make([][]int32, n)
	for i := range d.next {
		for _, t := range d.next[i] {
			if t >= 0 {
				rev[t] = append(rev[t], int32(i))
			}
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, p := range rev[s] {
			if d.dist[p] < 0 {
				d.dist[p] = d.dist[s] + 1
				queue = append(queue, p)
			}
		}
	}
	for i := range d.next {
		for c, t := range d.next[i] {
			if t >= 0 && d.dist[t] < 0 {
				d.next[i][c] = -1
			}
		}
	}
}
