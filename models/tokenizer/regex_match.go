package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// matcher runs a compiled regex over one string with backtracking.
// Positions are byte offsets into s.
type matcher struct {
	s   string
	buf []int // end positions of single-rune repeats, shared as a stack
}

// findAll calls fn for each successive leftmost-first, non-overlapping,
// non-empty match, as Oniguruma's find_iter does for these patterns.
func (re *regex) findAll(s string, fn func(start, end int)) {
	m := &matcher{s: s}
	pos := 0
	for pos < len(s) {
		found, mend := -1, -1
		for start := pos; start < len(s); {
			end := -1
			if m.match(re.root, start, func(e int) bool { end = e; return true }) {
				found, mend = start, end
				break
			}
			_, w := utf8.DecodeRuneInString(s[start:])
			start += w
		}
		if found < 0 {
			return
		}
		if mend == found { // empty match: step over one rune
			_, w := utf8.DecodeRuneInString(s[found:])
			pos = found + w
			continue
		}
		fn(found, mend)
		pos = mend
	}
}

// one reports whether the single-rune node n matches at i, and the width.
func (m *matcher) one(n *reNode, i int) (int, bool) {
	if i >= len(m.s) {
		return 0, false
	}
	r, w := utf8.DecodeRuneInString(m.s[i:])
	switch n.kind {
	case reLit:
		if r == n.r || (n.fold && foldEq(r, n.r)) {
			return w, true
		}
	case reClass:
		if n.cls.matches(r, n.fold) {
			return w, true
		}
	case reAny:
		if r != '\n' {
			return w, true
		}
	}
	return 0, false
}

func foldEq(a, b rune) bool {
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

func isSingle(n *reNode) bool {
	return n.kind == reLit || n.kind == reClass || n.kind == reAny
}

func (m *matcher) match(n *reNode, i int, k func(int) bool) bool {
	switch n.kind {
	case reLit, reClass, reAny:
		if w, ok := m.one(n, i); ok {
			return k(i + w)
		}
		return false
	case reConcat:
		return m.seq(n.subs, i, k)
	case reAlt:
		for _, s := range n.subs {
			if m.match(s, i, k) {
				return true
			}
		}
		return false
	case reRepeat:
		if isSingle(n.sub) {
			return m.repeatSingle(n, i, k)
		}
		if n.possessive {
			end := m.greedyEnd(n, i, 0)
			return end >= 0 && k(end)
		}
		return m.repeat(n, i, 0, k)
	case reLook:
		ok := m.match(n.sub, i, func(int) bool { return true })
		if ok != n.neg {
			return k(i)
		}
		return false
	case reBegin: // Oniguruma's Ruby syntax: ^ and $ are line anchors
		return (i == 0 || m.s[i-1] == '\n') && k(i)
	case reEnd:
		return (i == len(m.s) || m.s[i] == '\n') && k(i)
	}
	return false
}

func (m *matcher) seq(subs []*reNode, i int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(i)
	}
	if len(subs) == 1 {
		return m.match(subs[0], i, k)
	}
	return m.match(subs[0], i, func(j int) bool { return m.seq(subs[1:], j, k) })
}

// repeatSingle handles x*, x+, x{m,n} for a one-rune x without recursion:
// collect every end position greedily, then try them from longest (greedy)
// or shortest (lazy).
func (m *matcher) repeatSingle(n *reNode, i int, k func(int) bool) bool {
	base := len(m.buf)
	m.buf = append(m.buf, i)
	pos := i
	for count := 0; n.max < 0 || count < n.max; count++ {
		w, ok := m.one(n.sub, pos)
		if !ok {
			break
		}
		pos += w
		m.buf = append(m.buf, pos)
	}
	got := len(m.buf) - base - 1
	defer func() { m.buf = m.buf[:base] }()
	if got < n.min {
		return false
	}
	if n.possessive {
		return k(m.buf[base+got])
	}
	if n.lazy {
		for c := n.min; c <= got; c++ {
			if k(m.buf[base+c]) {
				return true
			}
		}
		return false
	}
	for c := got; c >= n.min; c-- {
		if k(m.buf[base+c]) {
			return true
		}
	}
	return false
}

func (m *matcher) repeat(n *reNode, i, count int, k func(int) bool) bool {
	canMore := n.max < 0 || count < n.max
	more := func() bool {
		return canMore && m.match(n.sub, i, func(j int) bool {
			if j == i { // an empty iteration cannot make progress
				return false
			}
			return m.repeat(n, j, count+1, k)
		})
	}
	if n.lazy {
		if count >= n.min && k(i) {
			return true
		}
		return more()
	}
	if more() {
		return true
	}
	return count >= n.min && k(i)
}

// greedyEnd matches n's body as many times as possible without giving any
// back (possessive), returning the end or -1.
func (m *matcher) greedyEnd(n *reNode, i, count int) int {
	for n.max < 0 || count < n.max {
		next := -1
		m.match(n.sub, i, func(j int) bool { next = j; return true })
		if next <= i {
			break
		}
		i = next
		count++
	}
	if count < n.min {
		return -1
	}
	return i
}
