package chattemplate

import (
	"errors"
	"fmt"
	"strings"
)

// One expression can allocate without bound before any output or set is
// checked: 'x' * 100000000000 is a single strings.Repeat inside the engine.
// So the sandbox also rewrites the operators and methods that can build a
// value much larger than their operands, so that the guard sees the
// operands first and refuses before the engine allocates:
//
//	a * b    ->  L(a) * Rmul(b)     (string repetition)
//	a + b    ->  L(a) + Radd(b)     (string and list concatenation)
//	a ~ b    ->  L(a) ~ Rcat(b)
//	s.replace(x, y)  ->  sreplace(s, x, y)
//	s.split(x)       ->  ssplit(s, x)
//
// L pushes its operand on the guard's stack and returns it unchanged; R
// pops it, checks the size the operation would produce, and returns its
// own operand unchanged, so the engine still does the operation itself
// with its own semantics. The engine evaluates the left operand, then the
// right, then applies the operator, and nothing short-circuits in between
// (and/or/if bind looser than these operators), so pushes and pops pair up.
// The filters that multiply size (join, indent, replace, list) are renamed
// to bounded copies by rewriteFilters.

// exprToken is one lexical token of an expression.
type exprToken struct {
	kind byte   // 's' string, 'n' number, 'w' word, 'o' operator, or the bracket / punctuation itself
	text string // as written
}

var errExprUnknown = errors.New("the sandbox cannot follow this expression")

// lexExpr splits an expression into tokens; ok is false on a character the
// engine's lexer would refuse too (the engine then reports it).
func lexExpr(s string) ([]exprToken, bool) {
	var out []exprToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, false
			}
			out = append(out, exprToken{'s', s[i : j+1]})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (isIdent(s, j) || s[j] == '.' || ((s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			out = append(out, exprToken{'n', s[i:j]})
			i = j
		case isIdent(s, i):
			j := i
			for j < len(s) && isIdent(s, j) {
				j++
			}
			out = append(out, exprToken{'w', s[i:j]})
			i = j
		case strings.ContainsRune("()[]{},:.|", rune(c)):
			out = append(out, exprToken{c, s[i : i+1]})
			i++
		default:
			n := 1
			for _, op := range []string{"**", "//", "==", "!=", "<=", ">="} {
				if strings.HasPrefix(s[i:], op) {
					n = 2
				}
			}
			if n == 1 && !strings.ContainsRune("+-*/%~<>=!", rune(c)) {
				return nil, false
			}
			out = append(out, exprToken{'o', s[i : i+n]})
			i += n
		}
	}
	return out, true
}

// guardExpr rewrites one expression (a {{ }} body, a set value, an if
// condition, a for header) as described above.
func guardExpr(s string) (string, error) {
	toks, ok := lexExpr(s)
	if !ok {
		return s, nil // the engine refuses it itself
	}
	r := exprRewriter{toks: toks}
	out, err := r.list(0)
	if err != nil {
		return "", err
	}
	if r.pos != len(toks) {
		return "", fmt.Errorf("%w: unbalanced %q", errExprUnknown, toks[r.pos].text)
	}
	return out, nil
}

type exprRewriter struct {
	toks []exprToken
	pos  int
}

func (r *exprRewriter) peek() exprToken {
	if r.pos < len(r.toks) {
		return r.toks[r.pos]
	}
	return exprToken{}
}

// separator reports whether t ends an arithmetic chain: everything that
// binds looser than ~ (and punctuation between items).
func separator(t exprToken) bool {
	switch t.kind {
	case ',', ':':
		return true
	case 'o':
		switch t.text {
		case "==", "!=", "<", ">", "<=", ">=", "=", "!":
			return true
		}
	case 'w':
		switch t.text {
		case "if", "else", "or", "and", "not", "in", "is", "for", "recursive":
			return true
		}
	}
	return false
}

// list rewrites tokens up to the closer (0: the end): chains of
// arithmetic separated by looser operators and punctuation.
func (r *exprRewriter) list(closer byte) (string, error) {
	var parts []string
	for {
		t := r.peek()
		switch {
		case t.kind == 0 || t.kind == closer:
			return strings.Join(parts, " "), nil
		case t.kind == ')' || t.kind == ']' || t.kind == '}':
			return "", fmt.Errorf("%w: unbalanced %q", errExprUnknown, t.text)
		case separator(t):
			parts = append(parts, t.text)
			r.pos++
		default:
			c, err := r.chain()
			if err != nil {
				return "", err
			}
			parts = append(parts, c)
		}
	}
}

// exprNode is a chain's tree: a leaf term or a binary operation.
type exprNode struct {
	term        string
	op          string
	left, right *exprNode
}

// chain parses term (op term)* with the engine's precedence: ~ below
// + and -, below * / // %.
func (r *exprRewriter) chain() (string, error) {
	n, err := r.level(0)
	if err != nil {
		return "", err
	}
	return n.emit(), nil
}

var levels = [][]string{{"~"}, {"+", "-"}, {"*", "/", "//", "%"}}

func (r *exprRewriter) level(l int) (*exprNode, error) {
	if l == len(levels) {
		t, err := r.term()
		return &exprNode{term: t}, err
	}
	left, err := r.level(l + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := r.peek()
		if t.kind != 'o' {
			return left, nil
		}
		found := false
		for _, op := range levels[l] {
			found = found || t.text == op
		}
		if !found {
			return left, nil
		}
		r.pos++
		right, err := r.level(l + 1)
		if err != nil {
			return nil, err
		}
		left = &exprNode{op: t.text, left: left, right: right}
	}
}

// guardedOps name the guard's right-hand check for each operator that can
// build a large value.
var guardedOps = map[string]string{"*": "rmul", "+": "radd", "~": "rcat"}

func (n *exprNode) emit() string {
	if n.op == "" {
		return n.term
	}
	l, r := n.left.emit(), n.right.emit()
	if check, ok := guardedOps[n.op]; ok {
		return guardPrefix + "l(" + l + ") " + n.op + " " + guardPrefix + check + "(" + r + ")"
	}
	return "(" + l + ") " + n.op + " (" + r + ")"
}

// term is [unary signs] primary postfix* [** [signs] primary postfix*].
func (r *exprRewriter) term() (string, error) {
	var b strings.Builder
	for {
		for t := r.peek(); t.kind == 'o' && (t.text == "-" || t.text == "+"); t = r.peek() {
			b.WriteString(t.text)
			r.pos++
		}
		p, err := r.postfix()
		if err != nil {
			return "", err
		}
		b.WriteString(p)
		if t := r.peek(); t.kind == 'o' && t.text == "**" {
			b.WriteString(" ** ")
			r.pos++
			continue
		}
		return b.String(), nil
	}
}

// group rewrites a bracketed group whose opener is the current token.
func (r *exprRewriter) group() (string, error) {
	open := r.peek().kind
	closer := map[byte]byte{'(': ')', '[': ']', '{': '}'}[open]
	r.pos++
	inner, err := r.list(closer)
	if err != nil {
		return "", err
	}
	if r.peek().kind != closer {
		return "", fmt.Errorf("%w: %q is not closed", errExprUnknown, string(open))
	}
	r.pos++
	return string(open) + inner + string(closer), nil
}

// stringMethods are rewritten into guarded functions taking the string
// first.
var stringMethods = map[string]string{"replace": "sreplace", "split": "ssplit"}

func (r *exprRewriter) postfix() (string, error) {
	var s string
	switch t := r.peek(); t.kind {
	case 's', 'n', 'w':
		s = t.text
		r.pos++
		for t.kind == 's' && r.peek().kind == 's' { // 'a' 'b' is 'ab'
			s += " " + r.peek().text
			r.pos++
		}
	case '(', '[', '{':
		g, err := r.group()
		if err != nil {
			return "", err
		}
		s = g
	default:
		return "", fmt.Errorf("%w: unexpected %q", errExprUnknown, t.text)
	}
	for {
		switch t := r.peek(); t.kind {
		case '.':
			r.pos++
			name := r.peek()
			if name.kind != 'w' && name.kind != 'n' {
				return "", fmt.Errorf("%w: %q after a dot", errExprUnknown, name.text)
			}
			r.pos++
			if fn, ok := stringMethods[name.text]; ok && r.peek().kind == '(' {
				args, err := r.group()
				if err != nil {
					return "", err
				}
				inner := strings.TrimSpace(args[1 : len(args)-1])
				if inner != "" {
					inner = ", " + inner
				}
				s = guardPrefix + fn + "(" + s + inner + ")"
				continue
			}
			s += "." + name.text
		case '(', '[':
			g, err := r.group()
			if err != nil {
				return "", err
			}
			s += g
		case '|':
			r.pos++
			name := r.peek()
			if name.kind != 'w' {
				return "", fmt.Errorf("%w: %q after |", errExprUnknown, name.text)
			}
			r.pos++
			s += " | " + name.text
			if r.peek().kind == '(' {
				g, err := r.group()
				if err != nil {
					return "", err
				}
				s += g
			}
		default:
			return s, nil
		}
	}
}
