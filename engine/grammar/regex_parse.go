package grammar

import (
	"fmt"
	"strconv"
	"strings"
)

// The pattern parser: syntax to reNode trees (the subset is in regex.go).

func (p *reParser) errf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *reParser) alt(depth int) (*reNode, error) {
	if depth > 50 {
		return nil, p.errf("groups nested too deep")
	}
	var alts []*reNode
	for {
		c, err := p.concat(depth)
		if err != nil {
			return nil, err
		}
		alts = append(alts, c)
		if p.pos < len(p.s) && p.s[p.pos] == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &reNode{op: '|', subs: alts}, nil
}

func (p *reParser) concat(depth int) (*reNode, error) {
	var seq []*reNode
	for p.pos < len(p.s) && p.s[p.pos] != '|' && p.s[p.pos] != ')' {
		a, err := p.atom(depth)
		if err != nil {
			return nil, err
		}
		for p.pos < len(p.s) {
			q, ok, err := p.quant()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			q.subs = []*reNode{a}
			a = q
		}
		seq = append(seq, a)
	}
	if len(seq) == 0 {
		return &reNode{op: 'e'}, nil
	}
	return &reNode{op: '.', subs: seq}, nil
}

func (p *reParser) quant() (*reNode, bool, error) {
	q := &reNode{op: '*'}
	switch p.s[p.pos] {
	case '*':
		q.min, q.max = 0, -1
		p.pos++
	case '+':
		q.min, q.max = 1, -1
		p.pos++
	case '?':
		q.min, q.max = 0, 1
		p.pos++
	case '{':
		end := strings.IndexByte(p.s[p.pos:], '}')
		if end < 0 {
			return nil, false, p.errf("unclosed {")
		}
		body := p.s[p.pos+1 : p.pos+end]
		lo, hi, comma := strings.Cut(body, ",")
		var err error
		if q.min, err = strconv.Atoi(lo); err != nil {
			return nil, false, p.errf("bad repetition {%s}", body)
		}
		q.max = q.min
		if comma {
			q.max = -1
			if hi != "" {
				if q.max, err = strconv.Atoi(hi); err != nil {
					return nil, false, p.errf("bad repetition {%s}", body)
				}
			}
		}
		if q.min > maxRepeat || q.max > maxRepeat || (q.max >= 0 && q.max < q.min) {
			return nil, false, p.errf("repetition {%s} out of order or over %d", body, maxRepeat)
		}
		p.pos += end + 1
	default:
		return nil, false, nil
	}
	if p.pos < len(p.s) && p.s[p.pos] == '?' {
		p.pos++ // lazy: the same set of strings
	}
	return q, true, nil
}

// escape reads the character or class after a backslash.
func (p *reParser) escape() (charSet, error) {
	if p.pos >= len(p.s) {
		return charSet{}, p.errf("trailing backslash")
	}
	c := p.s[p.pos]
	p.pos++
	var s charSet
	switch c {
	case 'd':
		return digits, nil
	case 'D':
		return digits.not(), nil
	case 'w':
		return words, nil
	case 'W':
		return words.not(), nil
	case 's':
		return spaces, nil
	case 'S':
		return spaces.not(), nil
	case 't':
		s.add('\t', '\t')
	case 'n':
		s.add('\n', '\n')
	case 'r':
		s.add('\r', '\r')
	case 'f':
		s.add('\f', '\f')
	case 'v':
		s.add('\v', '\v')
	default:
		if c < 128 && strings.IndexByte(`^$\.*+?()[]{}|/-`, c) >= 0 {
			s.add(c, c)
			return s, nil
		}
		return s, p.errf(`unsupported escape \%c`, c)
	}
	return s, nil
}

func (p *reParser) atom(depth int) (*reNode, error) {
	c := p.s[p.pos]
	switch {
	case c >= 128:
		return nil, p.errf("non-ASCII characters are not supported")
	case c == '(':
		p.pos++
		if strings.HasPrefix(p.s[p.pos:], "?:") {
			p.pos += 2
		} else if strings.HasPrefix(p.s[p.pos:], "?") {
			return nil, p.errf("lookaround and named groups are not supported")
		}
		n, err := p.alt(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			return nil, p.errf("unclosed (")
		}
		p.pos++
		return n, nil
	case c == '[':
		p.pos++
		return p.class()
	case c == '.':
		p.pos++
		return &reNode{op: 'c', set: dot}, nil
	case c == '\\':
		p.pos++
		if p.pos < len(p.s) && (p.s[p.pos] == 'b' || p.s[p.pos] == 'B' || (p.s[p.pos] >= '1' && p.s[p.pos] <= '9')) {
			return nil, p.errf(`\%c (word boundaries and backreferences) is not supported`, p.s[p.pos])
		}
		s, err := p.escape()
		return &reNode{op: 'c', set: s}, err
	case c == '^' || c == '$':
		return nil, p.errf("anchor %c is supported only at the very start (^) or end ($)", c)
	case c == '*' || c == '+' || c == '?' || c == '{':
		return nil, p.errf("nothing to repeat before %c", c)
	}
	p.pos++
	var s charSet
	s.add(c, c)
	return &reNode{op: 'c', set: s}, nil
}

func (p *reParser) class() (*reNode, error) {
	var s charSet
	neg := false
	if p.pos < len(p.s) && p.s[p.pos] == '^' {
		neg = true
		p.pos++
	}
	for {
		if p.pos >= len(p.s) {
			return nil, p.errf("unclosed [")
		}
		c := p.s[p.pos]
		if c == ']' {
			p.pos++
			break
		}
		if c >= 128 {
			return nil, p.errf("non-ASCII characters are not supported")
		}
		var lo charSet
		single, isSingle := c, true
		p.pos++
		if c == '\\' {
			e, err := p.escape()
			if err != nil {
				return nil, err
			}
			lo = e
			isSingle = countBits(e) == 1
			single = firstBit(e)
		} else {
			lo.add(c, c)
		}
		if isSingle {
			if p.pos+1 < len(p.s) && p.s[p.pos] == '-' && p.s[p.pos+1] != ']' {
				hc := p.s[p.pos+1]
				p.pos += 2
				if hc == '\\' {
					e, err := p.escape()
					if err != nil || countBits(e) != 1 {
						return nil, p.errf("bad range end")
					}
					hc = firstBit(e)
				}
				if hc >= 128 || hc < single {
					return nil, p.errf("bad range %c-%c", single, hc)
				}
				lo.add(single, hc)
			}
		}
		s = s.or(lo)
	}
	if neg {
		s = s.not()
	}
	return &reNode{op: 'c', set: s}, nil
}

func countBits(s charSet) int {
	n := 0
	for c := 0; c < 128; c++ {
		if s.has(byte(c)) {
			n++
		}
	}
	return n
}

func firstBit(s charSet) byte {
	for c := 0; c < 128; c++ {
		if s.has(byte(c)) {
			return byte(c)
		}
	}
	return 0
}
