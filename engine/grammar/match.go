package grammar

import "math/bits"

// The matcher is a pushdown automaton over bytes. A thread is one way of
// reading the text so far: the innermost value being written (a frame)
// and the values around it (a stack, shared between threads and never
// changed once built). anyOf forks threads; threads that meet again are
// merged, so their number stays at most the number of branches. Every
// byte a thread accepts keeps a valid completion possible, which is what
// makes a dead end impossible for a satisfiable schema.

// frame is the state inside one value. It is comparable, so equal threads
// can be merged and used as cache keys.
type frame struct {
	n      *node // nil: the whole document is written
	phase  uint8
	ws     uint8 // whitespace bytes in a row
	u8need uint8 // string: UTF-8 continuation bytes still due
	u8lo   uint8
	u8hi   uint8
	numLen uint8
	sub    int32 // literal/key trie node, pattern state, or property index
	count  int32 // characters, items
	seen   uint64
	num    [numCap]byte
}

type stack struct {
	f     frame // in the state to resume when the inner value ends
	next  *stack
	depth int32
	cost  int // bytes that finish f and everything below
}

type thread struct {
	f    frame
	rest *stack
}

// Phases.
const (
	sBefore, sIn, sEsc = 0, 1, 2

	aBefore, aOpen, aItem, aComma = 0, 1, 2, 3

	oBefore, oOpen, oKey, oColon, oValue, oAfter, oComma = 0, 1, 2, 3, 4, 5, 6
)

// keyString is a free-form object key.
var keyString = &node{kind: kString, maxLen: -1, maxItems: -1}

func isWS(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

func push(f frame, rest *stack) *stack {
	s := &stack{f: f, next: rest, depth: 1, cost: f.dist()}
	if rest != nil {
		s.depth = rest.depth + 1
		s.cost += rest.cost
	}
	return s
}

// finish ends the innermost value: the thread resumes the enclosing one.
func finish(rest *stack) thread {
	if rest == nil {
		return thread{}
	}
	return thread{rest.f, rest.next}
}

// start begins a value of n with its first byte b.
func start(n *node, rest *stack, b byte, out []thread) []thread {
	switch n.kind {
	case kNever:
		return out
	case kAnyOf:
		for _, a := range n.alts {
			out = start(a, rest, b, out)
		}
		return out
	case kArray, kObject:
		if rest != nil && rest.depth >= maxDepth {
			return out
		}
	}
	return step(thread{f: frame{n: n}, rest: rest}, b, out)
}

// space accepts a whitespace byte between tokens.
func space(t thread, b byte, out []thread) ([]thread, bool) {
	if !isWS(b) {
		return out, false
	}
	if t.f.ws < maxWS {
		t.f.ws++
		out = append(out, t)
	}
	return out, true
}

// step feeds b to t and appends the threads that survive to out.
func step(t thread, b byte, out []thread) []thread {
	f := t.f
	n := f.n
	if n == nil {
		return out // nothing may follow the document
	}
	switch n.kind {
	case kAnyOf, kNever: // the document's root, not begun yet
		return start(n, t.rest, b, out)
	case kLiteral:
		nd := &n.lit.nodes[f.sub]
		if nx, ok := nd.next[b]; ok {
			f.sub = nx
			out = append(out, thread{f, t.rest})
		}
		if nd.value >= 0 {
			// A number literal ends at the first byte that is not its own.
			out = step(finish(t.rest), b, out)
		}
		return out
	case kNumber:
		if (b >= '0' && b <= '9' || b == '-' || b == '.') && int(f.numLen) < numCap {
			f.num[f.numLen] = b
			if numOK(f.num[:f.numLen+1], n) {
				f.numLen++
				out = append(out, thread{f, t.rest})
			}
		}
		if numEnd(t.f.num[:t.f.numLen], n) {
			out = step(finish(t.rest), b, out)
		}
		return out
	case kString:
		return stepString(t, b, out)
	case kArray:
		return stepArray(t, b, out)
	}
	return stepObject(t, b, out)
}

func stepString(t thread, b byte, out []thread) []thread {
	f := t.f
	n := f.n
	switch f.phase {
	case sBefore:
		if b == '"' {
			f.phase = sIn
			out = append(out, thread{f, t.rest})
		}
		return out
	case sEsc:
		c, ok := unescape(b)
		if !ok || !f.char(c) {
			return out
		}
		f.phase = sIn
		return append(out, thread{f, t.rest})
	}
	if f.u8need > 0 {
		if b < f.u8lo || b > f.u8hi {
			return out
		}
		f.u8need--
		f.u8lo, f.u8hi = 0x80, 0xBF
		return append(out, thread{f, t.rest})
	}
	switch {
	case b == '"':
		if int(f.count) >= n.minLen && (n.re == nil || n.re.accept[f.sub]) {
			out = append(out, finish(t.rest))
		}
		return out
	case b == '\\':
		if f.escapable() {
			f.phase = sEsc
			out = append(out, thread{f, t.rest})
		}
		return out
	case b < 0x20:
		return out
	case b < 0x80:
		if f.char(b) {
			out = append(out, thread{f, t.rest})
		}
		return out
	}
	// A UTF-8 lead byte: only well-formed sequences are written.
	if n.re != nil || (n.maxLen >= 0 && int(f.count) >= n.maxLen) {
		return out
	}
	switch {
	case b >= 0xC2 && b <= 0xDF:
		f.u8need, f.u8lo, f.u8hi = 1, 0x80, 0xBF
	case b == 0xE0:
		f.u8need, f.u8lo, f.u8hi = 2, 0xA0, 0xBF
	case b == 0xED:
		f.u8need, f.u8lo, f.u8hi = 2, 0x80, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		f.u8need, f.u8lo, f.u8hi = 2, 0x80, 0xBF
	case b == 0xF0:
		f.u8need, f.u8lo, f.u8hi = 3, 0x90, 0xBF
	case b >= 0xF1 && b <= 0xF3:
		f.u8need, f.u8lo, f.u8hi = 3, 0x80, 0xBF
	case b == 0xF4:
		f.u8need, f.u8lo, f.u8hi = 3, 0x80, 0x8F
	default:
		return out
	}
	f.count++
	return append(out, thread{f, t.rest})
}

// unescape maps the byte after a backslash to the character it writes
// (\u escapes are not written).
func unescape(b byte) (byte, bool) {
	switch b {
	case '"', '\\', '/':
		return b, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// char adds one ASCII character to a string, if the schema allows it.
func (f *frame) char(c byte) bool {
	n := f.n
	if n.maxLen >= 0 && int(f.count) >= n.maxLen {
		return false
	}
	if n.re != nil {
		nx := n.re.next[f.sub][c]
		if nx < 0 {
			return false
		}
		f.sub = nx
	}
	f.count++
	return true
}

// escapable reports whether some escape can follow a backslash.
func (f *frame) escapable() bool {
	for _, e := range []byte(`"\/bfnrt`) {
		c, _ := unescape(e)
		g := *f
		if g.char(c) {
			return true
		}
	}
	return false
}

func stepArray(t thread, b byte, out []thread) []thread {
	f := t.f
	n := f.n
	if f.phase != aBefore {
		var isSpace bool
		if out, isSpace = space(t, b, out); isSpace {
			return out
		}
		f.ws = 0
	}
	item := func() []thread {
		if n.maxItems >= 0 && int(f.count) >= n.maxItems {
			return out
		}
		p := f
		p.phase = aItem
		p.count++
		return start(n.items, push(p, t.rest), b, out)
	}
	switch f.phase {
	case aBefore:
		if b == '[' {
			f.phase = aOpen
			out = append(out, thread{f, t.rest})
		}
	case aOpen:
		if b == ']' {
			if n.minItems == 0 {
				out = append(out, finish(t.rest))
			}
			return out
		}
		return item()
	case aItem:
		switch b {
		case ',':
			if n.maxItems < 0 || int(f.count) < n.maxItems {
				f.phase = aComma
				out = append(out, thread{f, t.rest})
			}
		case ']':
			if int(f.count) >= n.minItems {
				out = append(out, finish(t.rest))
			}
		}
	case aComma:
		return item()
	}
	return out
}

func stepObject(t thread, b byte, out []thread) []thread {
	f := t.f
	n := f.n
	if f.phase != oBefore && f.phase != oKey {
		var isSpace bool
		if out, isSpace = space(t, b, out); isSpace {
			return out
		}
		f.ws = 0
	}
	switch f.phase {
	case oBefore:
		if b == '{' {
			f.phase = oOpen
			out = append(out, thread{f, t.rest})
		}
	case oOpen, oComma:
		if b == '}' {
			if f.phase == oOpen && n.required&^f.seen == 0 {
				out = append(out, finish(t.rest))
			}
			return out
		}
		if b != '"' {
			return out
		}
		if len(n.props) > 0 {
			nx, ok := n.keys.nodes[0].next['"']
			if ok && n.keys.nodes[nx].below&^f.seen != 0 {
				f.phase, f.sub = oKey, nx
				out = append(out, thread{f, t.rest})
			}
			return out
		}
		if n.addl != nil {
			p := f
			p.phase, p.sub = oColon, -1
			p.count++
			return start(keyString, push(p, t.rest), b, out)
		}
	case oKey:
		nx, ok := n.keys.nodes[f.sub].next[b]
		if !ok || n.keys.nodes[nx].below&^f.seen == 0 {
			return out
		}
		f.sub = nx
		if v := n.keys.nodes[nx].value; v >= 0 {
			f.phase, f.sub = oColon, v
		}
		out = append(out, thread{f, t.rest})
	case oColon:
		if b == ':' {
			f.phase = oValue
			out = append(out, thread{f, t.rest})
		}
	case oValue:
		p := f
		p.phase = oAfter
		vn := n.addl
		if f.sub >= 0 {
			p.seen |= 1 << uint(f.sub)
			vn = n.props[f.sub].n
		}
		return start(vn, push(p, t.rest), b, out)
	case oAfter:
		switch b {
		case ',':
			if len(n.props) == 0 || f.seen != allProps(n) {
				f.phase = oComma
				out = append(out, thread{f, t.rest})
			}
		case '}':
			if n.required&^f.seen == 0 {
				out = append(out, finish(t.rest))
			}
		}
	}
	return out
}

func allProps(n *node) uint64 {
	if len(n.props) == 64 {
		return ^uint64(0)
	}
	return 1<<uint(len(n.props)) - 1
}

// dist is the fewest bytes that finish the value f is in.
func (f *frame) dist() int {
	n := f.n
	if n == nil {
		return 0
	}
	switch n.kind {
	case kAnyOf, kNever:
		return n.size()
	case kLiteral:
		return int(n.lit.nodes[f.sub].rest)
	case kNumber:
		return numDist(f.num[:f.numLen], n)
	case kString:
		switch f.phase {
		case sBefore:
			return n.size()
		case sIn:
			if n.re != nil {
				return int(n.re.dist[f.sub]) + 1
			}
			return int(f.u8need) + max(0, n.minLen-int(f.count)) + 1
		}
		best := infinite
		for _, e := range []byte(`"\/bfnrt`) {
			c, _ := unescape(e)
			g := *f
			if g.char(c) {
				d := max(0, n.minLen-int(g.count))
				if n.re != nil {
					d = int(n.re.dist[g.sub])
				}
				best = min(best, 1+d+1)
			}
		}
		return best
	case kArray:
		item := n.items.size()
		switch f.phase {
		case aBefore:
			return n.size()
		case aOpen:
			if n.minItems == 0 {
				return 1
			}
			return add(mul(n.minItems, item), n.minItems-1, 1)
		case aItem:
			return add(mul(max(0, n.minItems-int(f.count)), add(item, 1)), 1)
		}
		r := max(1, n.minItems-int(f.count))
		return add(item, mul(r-1, add(item, 1)), 1)
	}
	// Object.
	if f.phase == oBefore {
		return n.size()
	}
	missing := n.required &^ f.seen
	cost := func(i int) int { return add(len(n.props[i].key), 1, n.props[i].n.size()) }
	sum, k := 0, bits.OnesCount64(missing)
	for m := missing; m != 0; m &= m - 1 {
		sum = add(sum, cost(bits.TrailingZeros64(m)))
	}
	without := func(i int) (int, int) { // the rest once property i is written
		if i >= 0 && missing&(1<<uint(i)) != 0 {
			return sum - cost(i), k - 1
		}
		return sum, k
	}
	switch f.phase {
	case oOpen:
		if k == 0 {
			return 1
		}
		return add(sum, k-1, 1)
	case oKey:
		best := infinite
		nd := &n.keys.nodes[f.sub]
		for m := nd.below &^ f.seen; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			s, kk := without(i)
			best = min(best, add(len(n.props[i].key)-int(nd.depth), 1, n.props[i].n.size(), s, kk, 1))
		}
		return best
	case oColon, oValue:
		vn := n.addl
		if f.sub >= 0 {
			vn = n.props[f.sub].n
		}
		s, kk := without(int(f.sub))
		d := add(vn.size(), s, kk, 1)
		if f.phase == oColon {
			d = add(d, 1)
		}
		return d
	case oAfter:
		return add(sum, k, 1)
	}
	// oComma: one more member is due.
	if k > 0 {
		return add(sum, k-1, 1)
	}
	if len(n.props) == 0 {
		return add(3, n.addl.size(), 1)
	}
	best := infinite
	for m := allProps(n) &^ f.seen; m != 0; m &= m - 1 {
		best = min(best, add(cost(bits.TrailingZeros64(m)), 1))
	}
	return best
}

func (t *thread) dist() int {
	d := t.f.dist()
	if t.rest != nil {
		d = add(d, t.rest.cost)
	}
	return d
}

// canEnd reports whether the document may end after t.
func (t *thread) canEnd() bool {
	if t.f.n == nil {
		return true
	}
	if t.rest != nil {
		return false
	}
	switch t.f.n.kind {
	case kNumber:
		return numEnd(t.f.num[:t.f.numLen], t.f.n)
	case kLiteral:
		return t.f.n.lit.nodes[t.f.sub].value >= 0
	}
	return false
}

// final reports whether nothing at all may follow t.
func (t *thread) final() bool {
	if t.f.n == nil {
		return true
	}
	return t.rest == nil && t.f.n.kind == kLiteral && t.canEnd() && len(t.f.n.lit.nodes[t.f.sub].next) == 0
}

// dedup merges equal threads in place.
func dedup(ts []thread) []thread {
	if len(ts) < 2 {
		return ts
	}
	out := ts[:1]
	for _, t := range ts[1:] {
		dup := false
		for _, o := range out {
			if o == t {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}
