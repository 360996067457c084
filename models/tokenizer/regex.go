package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hugging Face pre-tokenizer patterns are Oniguruma regexes: they use
// negative lookahead (`\s+(?!\S)`) and rely on backtracking, leftmost-first
// alternation. Go's regexp (RE2) has neither, so this file holds a small
// backtracking engine that covers the subset those patterns use: literals,
// classes with \p{..} categories, (?i:..), (?:..), lookahead, the usual
// quantifiers (greedy, lazy, possessive) and ^/$ anchors. Anything else is
// rejected with an error naming the pattern, instead of silently
// tokenizing differently from the reference.

type reKind uint8

const (
	reLit reKind = iota
	reClass
	reAny
	reConcat
	reAlt
	reRepeat
	reLook
	reBegin
	reEnd
)

type reNode struct {
	kind       reKind
	r          rune // reLit
	fold       bool // reLit, reClass: case-insensitive
	cls        *charClass
	subs       []*reNode // concat, alt
	sub        *reNode   // repeat, look
	min, max   int       // repeat; max<0 means unbounded
	lazy       bool
	possessive bool
	neg        bool // look: negative
}

// charClass is a union of ranges and Unicode tables, optionally negated.
type charClass struct {
	neg    bool
	ranges [][2]rune
	tables []*unicode.RangeTable
	nots   []*unicode.RangeTable // \P{..} and \S-style negated members
	subs   []*charClass          // nested negated classes (\S inside [...])
}

func (c *charClass) has(r rune) bool {
	return c.raw(r) != c.neg
}

func (c *charClass) raw(r rune) bool {
	for _, rg := range c.ranges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	for _, t := range c.tables {
		if unicode.Is(t, r) {
			return true
		}
	}
	for _, t := range c.nots {
		if !unicode.Is(t, r) {
			return true
		}
	}
	for _, s := range c.subs {
		if s.has(r) {
			return true
		}
	}
	return false
}

func (c *charClass) matches(r rune, fold bool) bool {
	if c.has(r) {
		return true
	}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if c.has(f) {
				return true
			}
		}
	}
	return false
}

// regex is a compiled pattern.
type regex struct {
	src  string
	root *reNode
}

func compileRegex(src string) (*regex, error) {
	p := &reParser{src: []rune(src)}
	n, err := p.parseAlt(false)
	if err == nil && p.pos < len(p.src) {
		err = fmt.Errorf("unexpected %q at offset %d", p.src[p.pos], p.pos)
	}
	if err != nil {
		return nil, fmt.Errorf("unsupported regex %q: %w", src, err)
	}
	return &regex{src: src, root: n}, nil
}

type reParser struct {
	src  []rune
	pos  int
	fold bool
}

func (p *reParser) peek() (rune, bool) {
	if p.pos < len(p.src) {
		return p.src[p.pos], true
	}
	return 0, false
}

func (p *reParser) parseAlt(inGroup bool) (*reNode, error) {
	var alts []*reNode
	for {
		n, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, n)
		r, ok := p.peek()
		if !ok {
			break
		}
		if r == '|' {
			p.pos++
			continue
		}
		if r == ')' {
			if !inGroup {
				return nil, fmt.Errorf("unbalanced ')'")
			}
			break
		}
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &reNode{kind: reAlt, subs: alts}, nil
}

func (p *reParser) parseConcat() (*reNode, error) {
	var items []*reNode
	for {
		r, ok := p.peek()
		if !ok || r == '|' || r == ')' {
			break
		}
		atom, err := p.parseAtom()
		if err != nil {
			return nil, err
		}
		if atom == nil { // a flag group like (?i) that only changed state
			continue
		}
		atom, err = p.parseQuant(atom)
		if err != nil {
			return nil, err
		}
		items = append(items, atom)
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &reNode{kind: reConcat, subs: items}, nil
}

func (p *reParser) parseQuant(atom *reNode) (*reNode, error) {
	r, ok := p.peek()
	if !ok {
		return atom, nil
	}
	min, max := 0, 0
	switch r {
	case '*':
		min, max = 0, -1
	case '+':
		min, max = 1, -1
	case '?':
		min, max = 0, 1
	case '{':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end >= len(p.src) {
			return atom, nil
		}
		body := string(p.src[p.pos+1 : end])
		lo, hi, found := strings.Cut(body, ",")
		var err error
		if min, err = strconv.Atoi(lo); err != nil {
			return nil, fmt.Errorf("bad repetition {%s}", body)
		}
		max = min
		if found {
			max = -1
			if hi != "" {
				if max, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("bad repetition {%s}", body)
				}
			}
		}
		p.pos = end
	default:
		return atom, nil
	}
	p.pos++
	n := &reNode{kind: reRepeat, sub: atom, min: min, max: max}
	if r, ok := p.peek(); ok {
		switch r {
		case '?':
			n.lazy = true
			p.pos++
		case '+':
			n.possessive = true
			p.pos++
		}
	}
	return n, nil
}

func (p *reParser) parseAtom() (*reNode, error) {
	r := p.src[p.pos]
	p.pos++
	switch r {
	case '(':
		return p.parseGroup()
	case '[':
		cls, err := p.parseClass()
		if err != nil {
			return nil, err
		}
		return &reNode{kind: reClass, cls: cls, fold: p.fold}, nil
	case '.':
		return &reNode{kind: reAny}, nil
	case '^':
		return &reNode{kind: reBegin}, nil
	case '$':
		return &reNode{kind: reEnd}, nil
	case '\\':
		lit, cls, err := p.parseEscape()
		if err != nil {
			return nil, err
		}
		if cls != nil {
			return &reNode{kind: reClass, cls: cls, fold: p.fold}, nil
		}
		return &reNode{kind: reLit, r: lit, fold: p.fold}, nil
	case '*', '+', '?':
		return nil, fmt.Errorf("quantifier %q with nothing to repeat", r)
	}
	return &reNode{kind: reLit, r: r, fold: p.fold}, nil
}

func (p *reParser) parseGroup() (*reNode, error) {
	saved := p.fold
	defer func() { p.fold = saved }()
	var look, neg bool
	if r, ok := p.peek(); ok && r == '?' {
		p.pos++
		r, ok = p.peek()
		if !ok {
			return nil, fmt.Errorf("unterminated group")
		}
		switch r {
		case ':':
			p.pos++
		case '=', '!':
			look, neg = true, r == '!'
			p.pos++
		case '>':
			// Atomic groups behave like possessive matching of the group.
			return nil, fmt.Errorf("atomic groups are not supported")
		default:
			// Inline flags: (?i) or (?i:...); only i is meaningful here.
			on := true
			for p.pos < len(p.src) {
				c := p.src[p.pos]
				p.pos++
				switch c {
				case 'i':
					p.fold = on
				case '-':
					on = false
				case ':':
					goto body
				case ')':
					saved = p.fold // flags apply to the rest of the enclosing group
					return nil, nil
				default:
					return nil, fmt.Errorf("unsupported group flag %q", c)
				}
			}
			return nil, fmt.Errorf("unterminated group")
		}
	}
body:
	n, err := p.parseAlt(true)
	if err != nil {
		return nil, err
	}
	if r, ok := p.peek(); !ok || r != ')' {
		return nil, fmt.Errorf("missing ')'")
	}
	p.pos++
	if look {
		return &reNode{kind: reLook, sub: n, neg: neg}, nil
	}
	return n, nil
}

func (p *reParser) parseClass() (*charClass, error) {
	cls := &charClass{}
	if r, ok := p.peek(); ok && r == '^' {
		cls.neg = true
		p.pos++
	}
	first := true
	for {
		r, ok := p.peek()
		if !ok {
			return nil, fmt.Errorf("unterminated class")
		}
		p.pos++
		if r == ']' && !first {
			return cls, nil
		}
		first = false
		var lo rune
		switch r {
		case '\\':
			lit, sub, err := p.parseEscape()
			if err != nil {
				return nil, err
			}
			if sub != nil {
				cls.subs = append(cls.subs, sub)
				continue
			}
			lo = lit
		case '[':
			return nil, fmt.Errorf("nested classes are not supported")
		default:
			lo = r
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			h := p.src[p.pos]
			p.pos++
			if h == '\\' {
				lit, sub, err := p.parseEscape()
				if err != nil || sub != nil {
					return nil, fmt.Errorf("bad class range")
				}
				h = lit
			}
			hi = h
		}
		cls.ranges = append(cls.ranges, [2]rune{lo, hi})
	}
}

var whiteSpace = unicode.White_Space

// parseEscape reads after a backslash: either a literal rune or a class.
func (p *reParser) parseEscape() (rune, *charClass, error) {
	r, ok := p.peek()
	if !ok {
		return 0, nil, fmt.Errorf("trailing backslash")
	}
	p.pos++
	switch r {
	case 'n':
		return '\n', nil, nil
	case 'r':
		return '\r', nil, nil
	case 't':
		return '\t', nil, nil
	case 'f':
		return '\f', nil, nil
	case 'v':
		return '\v', nil, nil
	case 's':
		return 0, &charClass{tables: []*unicode.RangeTable{whiteSpace}}, nil
	case 'S':
		return 0, &charClass{nots: []*unicode.RangeTable{whiteSpace}}, nil
	case 'd':
		return 0, &charClass{tables: []*unicode.RangeTable{unicode.Nd}}, nil
	case 'D':
		return 0, &charClass{nots: []*unicode.RangeTable{unicode.Nd}}, nil
	case 'w':
		return 0, wordClass(false), nil
	case 'W':
		return 0, wordClass(true), nil
	case 'p', 'P':
		name, err := p.propName()
		if err != nil {
			return 0, nil, err
		}
		t, err := unicodeTable(name)
		if err != nil {
			return 0, nil, err
		}
		if r == 'P' {
			return 0, &charClass{nots: []*unicode.RangeTable{t}}, nil
		}
		return 0, &charClass{tables: []*unicode.RangeTable{t}}, nil
	case 'x', 'u':
		return p.hexEscape(r)
	}
	if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		return 0, nil, fmt.Errorf("unsupported escape \\%c", r)
	}
	return r, nil, nil
}

func wordClass(neg bool) *charClass {
	return &charClass{neg: neg, ranges: [][2]rune{{'_', '_'}},
		tables: []*unicode.RangeTable{unicode.L, unicode.M, unicode.Nd, unicode.Pc}}
}

func (p *reParser) propName() (string, error) {
	r, ok := p.peek()
	if !ok {
		return "", fmt.Errorf("bad \\p escape")
	}
	p.pos++
	if r != '{' {
		return string(r), nil
	}
	end := p.pos
	for end < len(p.src) && p.src[end] != '}' {
		end++
	}
	if end >= len(p.src) {
		return "", fmt.Errorf("unterminated \\p{")
	}
	name := string(p.src[p.pos:end])
	p.pos = end + 1
	return name, nil
}

func unicodeTable(name string) (*unicode.RangeTable, error) {
	if t, ok := unicode.Categories[name]; ok {
		return t, nil
	}
	if t, ok := unicode.Scripts[name]; ok {
		return t, nil
	}
	if t, ok := unicode.Properties[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown Unicode class %q", name)
}

func (p *reParser) hexEscape(kind rune) (rune, *charClass, error) {
	var digits string
	if r, ok := p.peek(); ok && r == '{' {
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end >= len(p.src) {
			return 0, nil, fmt.Errorf("unterminated \\%c{", kind)
		}
		digits = string(p.src[p.pos+1 : end])
		p.pos = end + 1
	} else {
		n := 2
		if kind == 'u' {
			n = 4
		}
		if p.pos+n > len(p.src) {
			return 0, nil, fmt.Errorf("short \\%c escape", kind)
		}
		digits = string(p.src[p.pos : p.pos+n])
		p.pos += n
	}
	v, err := strconv.ParseUint(digits, 16, 32)
	if err != nil {
		return 0, nil, fmt.Errorf("bad \\%c escape %q", kind, digits)
	}
	return rune(v), nil, nil
}
