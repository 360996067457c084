package chattemplate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// A chat template comes from a downloaded model, so it is untrusted code.
// The engine has no limits of its own, so Parse rewrites every template so
// that the render calls back into a guard: at the top of every loop body
// and macro body, around every {{ }} output and every {% set %} value. The
// guard counts and checks the clock and the context there, inside the
// render, and fails it with a LimitError the moment a limit is crossed.
// The inserted calls are {{ }} tags that print nothing: the engine's
// whitespace rules (trim_blocks, lstrip_blocks, "-" markers) skip over
// expression tags, so the rendered text is unchanged (TestGolden).

// Limits bound one render. A zero field takes the DefaultLimits value.
type Limits struct {
	MaxDepth      int           // macro calls nested inside each other
	MaxIterations int64         // loop iterations over the whole render (and the largest range())
	MaxOutput     int64         // bytes of output, and of any one value a {% set %} stores
	MaxTime       time.Duration // wall time of one render
}

// DefaultLimits are far above what any real chat template needs (a few
// hundred iterations and tens of kilobytes for a long conversation) and
// far below what would hurt the process.
var DefaultLimits = Limits{MaxDepth: 200, MaxIterations: 1_000_000, MaxOutput: 16 << 20, MaxTime: 10 * time.Second}

// Static bounds checked at Parse: the engine's parser recurses on nesting,
// so a template nested absurdly deep could exhaust the stack before any
// render starts.
const (
	maxSource  = 4 << 20 // bytes of template source
	maxNesting = 200     // nested block tags, or brackets inside one tag
	// maxFrames backs up MaxDepth for recursion that is not a macro call
	// (a recursive loop): the goroutine stack is checked directly.
	maxFrames = 50_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = DefaultLimits.MaxIterations
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultLimits.MaxOutput
	}
	if l.MaxTime <= 0 {
		l.MaxTime = DefaultLimits.MaxTime
	}
	return l
}

// LimitError is a render stopped by one of its Limits.
type LimitError struct {
	Template string // which template: its name and, when known, its file
	Limit    string // "recursion depth", "loop iterations", "output size", "time"
	Max      string // the limit's value, as shown
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("chattemplate: %s stopped: it went over the %s limit (%s)", e.Template, e.Limit, e.Max)
}

// guardPrefix names the guard's callables. It is random per process so a
// template cannot define macros of the same names to switch the guard off.
var guardPrefix = func() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "__hark" + hex.EncodeToString(b[:]) + "_"
}()

// sandbox rewrites src (already through rewriteFilters) so that it calls
// the guard; it rejects templates too large or too deeply nested to parse
// safely.
func sandbox(src string) (string, error) {
	if len(src) > maxSource {
		return "", fmt.Errorf("template is %d bytes, more than the %d allowed", len(src), maxSource)
	}
	type frame struct {
		kind string // the block keyword: for, macro, if, ...
		slot int    // index in parts of the guard call to fill at its end
		text int    // literal text inside the block so far
	}
	var parts []string
	var stack []frame
	addText := func(n int) {
		for i := range stack {
			stack[i].text += n
		}
	}
	for _, p := range splitTags(src) {
		switch p.kind {
		case '#':
			parts = append(parts, p.raw)
			continue
		case 0:
			parts = append(parts, p.raw)
			addText(len(p.raw))
			continue
		}
		if d := bracketDepth(p.body); d > maxNesting {
			return "", fmt.Errorf("brackets nested %d deep in one tag, more than the %d allowed", d, maxNesting)
		}
		if p.kind == '{' {
			if strings.TrimSpace(p.body) == "" {
				parts = append(parts, p.raw)
				continue
			}
			body, err := guardExpr(p.body)
			if err != nil {
				return "", err
			}
			parts = append(parts, p.open+" "+guardPrefix+"out("+body+") "+p.close)
			continue
		}
		word, rest := firstWord(p.body)
		switch word {
		case "for", "if", "elif", "macro", "call":
			// The condition, the iterable, a macro's default arguments and
			// a call's arguments are expressions too.
			expr, err := guardExpr(rest)
			if err != nil {
				return "", err
			}
			p.raw = p.open + " " + word + " " + expr + " " + p.close
		}
		switch word {
		case "for", "macro", "if", "call", "filter", "generation":
			parts = append(parts, p.raw)
			stack = append(stack, frame{kind: word, slot: len(parts)})
			if word == "for" || word == "macro" {
				parts = append(parts, "") // filled at the end tag with the body's text size
			}
			if len(stack) > maxNesting {
				return "", fmt.Errorf("blocks nested more than %d deep", maxNesting)
			}
		case "set":
			if target, value, ok := splitAssign(rest); ok {
				value, err := guardExpr(value)
				if err != nil {
					return "", err
				}
				parts = append(parts, p.open+" set "+target+"= "+guardPrefix+"val("+value+") "+p.close)
				continue
			}
			parts = append(parts, p.raw) // {% set x %}...{% endset %}
			stack = append(stack, frame{kind: word, slot: -1})
		case "endfor", "endmacro", "endif", "endcall", "endfilter", "endgeneration", "endset":
			if len(stack) == 0 || "end"+stack[len(stack)-1].kind != word {
				parts = append(parts, p.raw) // the engine reports the mismatch
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch f.kind {
			case "for":
				parts[f.slot] = fmt.Sprintf("{{ %sloop(%d) }}", guardPrefix, f.text)
			case "macro":
				parts[f.slot] = fmt.Sprintf("{{ %senter(%d) }}", guardPrefix, f.text)
				parts = append(parts, "{{ "+guardPrefix+"leave() }}")
			}
			parts = append(parts, p.raw)
		default:
			parts = append(parts, p.raw)
		}
	}
	return strings.Join(parts, ""), nil
}

// tagPiece is one piece of template source: text (kind 0) or a tag whose
// kind is the second byte of its opener ('{', '%' or '#').
type tagPiece struct {
	kind        byte
	raw         string // the piece as written
	open, close string // the delimiters with any "-" trim markers
	body        string // what is between them
}

// splitTags cuts src into text and tags, honouring quotes inside tags and
// keeping {% raw %} blocks as text.
func splitTags(src string) []tagPiece {
	var out []tagPiece
	text := 0
	for i := 0; i+1 < len(src); {
		if src[i] != '{' || (src[i+1] != '{' && src[i+1] != '%' && src[i+1] != '#') {
			i++
			continue
		}
		if i > text {
			out = append(out, tagPiece{raw: src[text:i]})
		}
		kind := src[i+1]
		end := tagEnd(src, i+2, kind)
		p := tagPiece{kind: kind, raw: src[i:end]}
		bodyStart, bodyEnd := i+2, end-2
		if bodyEnd < bodyStart {
			bodyEnd = bodyStart
		}
		if bodyStart < bodyEnd && src[bodyStart] == '-' {
			bodyStart++
		}
		if bodyEnd > bodyStart && src[bodyEnd-1] == '-' {
			bodyEnd--
		}
		p.open, p.body, p.close = src[i:bodyStart], src[bodyStart:bodyEnd], src[bodyEnd:end]
		if kind == '%' {
			if w, _ := firstWord(p.body); w == "raw" {
				// Everything up to {% endraw %} is literal text.
				if j := strings.Index(src[end:], "endraw"); j >= 0 {
					end = tagEnd(src, end+j, '%')
					p = tagPiece{raw: src[i:end]}
				}
			}
		}
		out = append(out, p)
		i, text = end, end
	}
	if text < len(src) {
		out = append(out, tagPiece{raw: src[text:]})
	}
	return out
}

// tagEnd is the index just past the closer of the tag whose body starts at
// start, skipping quoted strings (comments have no strings).
func tagEnd(src string, start int, kind byte) int {
	closer := "}}"
	switch kind {
	case '%':
		closer = "%}"
	case '#':
		closer = "#}"
	}
	end := len(src)
	unquoted(src, start, kind != '#', func(i int) bool {
		if strings.HasPrefix(src[i:], closer) {
			end = i + 2
			return false
		}
		return true
	})
	return end
}

// unquoted calls visit with the index of each byte of s from start on that
// is outside quoted strings ('...' or "...", with backslash escapes; the
// quotes themselves are not visited), until visit returns false. With
// quotes false nothing opens a string. Tag ends, bracket depth and
// assignments are all found this way, so that they agree on what is code.
func unquoted(s string, start int, quotes bool, visit func(i int) bool) {
	var quote byte
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case quotes && (c == '\'' || c == '"'):
			quote = c
		default:
			if !visit(i) {
				return
			}
		}
	}
}

// firstWord splits a statement into its keyword and the rest exactly as
// the engine does (letters and underscores: "for00" is "for" then "00"),
// so that no loop or macro can slip past the guard unrecognised.
func firstWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	for i, r := range s {
		if !unicode.IsLetter(r) && r != '_' {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// bracketDepth is the deepest nesting of (), [] and {} outside strings.
func bracketDepth(s string) int {
	depth, deepest := 0, 0
	unquoted(s, 0, true, func(i int) bool {
		switch s[i] {
		case '(', '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ')', ']', '}':
			depth--
		}
		return true
	})
	return deepest
}

// splitAssign splits "x = expr" (the part of a set tag after "set") at its
// top-level "=", refusing tuple targets, which cannot take one wrapped value.
func splitAssign(s string) (target, value string, ok bool) {
	depth := 0
	unquoted(s, 0, true, func(i int) bool {
		switch c := s[i]; {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == '=' && depth == 0:
			if (i > 0 && strings.ContainsRune("=!<>", rune(s[i-1]))) || (i+1 < len(s) && s[i+1] == '=') {
				return true
			}
			target, value = s[:i], s[i+1:]
			ok = !strings.Contains(target, ",") && strings.TrimSpace(value) != ""
			return false
		}
		return true
	})
	if !ok {
		return "", "", false
	}
	return target, value, true
}

// guard holds one render's counters; its callables are the names the
// rewritten template calls.
type guard struct {
	ctx      context.Context
	lim      Limits
	name     string
	deadline time.Time
	iters    int64
	out      int64
	depth    int
	ticks    int
	operands []jinja.Value // left operands awaiting their check (sandboxops.go)
	err      error         // the first limit hit, reported instead of the engine's wrapping
}

func newGuard(ctx context.Context, lim Limits, name string) *guard {
	lim = lim.withDefaults()
	return &guard{ctx: ctx, lim: lim, name: name, deadline: time.Now().Add(lim.MaxTime)}
}

func (g *guard) fail(limit, max string) error {
	if g.err == nil {
		g.err = &LimitError{Template: g.name, Limit: limit, Max: max}
	}
	return g.err
}

// check runs at every guard call: cancellation, the clock, the stack.
func (g *guard) check() error {
	if g.err != nil {
		return g.err
	}
	if err := g.ctx.Err(); err != nil {
		g.err = fmt.Errorf("chattemplate: rendering %s: %w", g.name, err)
		return g.err
	}
	g.ticks++
	if g.ticks%64 == 0 {
		if time.Now().After(g.deadline) {
			return g.fail("time", g.lim.MaxTime.String())
		}
		var pc [1]uintptr
		if runtime.Callers(maxFrames, pc[:]) > 0 {
			return g.fail("recursion depth", fmt.Sprintf("%d stack frames", maxFrames))
		}
	}
	return nil
}

func (g *guard) addOutput(n int) error {
	g.out += int64(n)
	if g.out > g.lim.MaxOutput {
		return g.fail("output size", fmt.Sprintf("%d bytes", g.lim.MaxOutput))
	}
	return nil
}

// install puts the guard's callables and a bounded range into data.
func (g *guard) install(data map[string]jinja.Value) {
	empty := jinja.NewString("")
	data[guardPrefix+"loop"] = jinja.NewCallable("loop guard", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		g.iters++
		if g.iters > g.lim.MaxIterations {
			return empty, g.fail("loop iterations", fmt.Sprint(g.lim.MaxIterations))
		}
		if err := g.check(); err != nil {
			return empty, err
		}
		return empty, g.addOutput(intArg(args))
	})
	data[guardPrefix+"enter"] = jinja.NewCallable("macro guard", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		g.depth++
		if g.depth > g.lim.MaxDepth {
			return empty, g.fail("recursion depth", fmt.Sprintf("%d nested macro calls", g.lim.MaxDepth))
		}
		if err := g.check(); err != nil {
			return empty, err
		}
		return empty, g.addOutput(intArg(args))
	})
	data[guardPrefix+"leave"] = jinja.NewCallable("macro guard", func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
		g.depth--
		return empty, nil
	})
	data[guardPrefix+"out"] = jinja.NewCallable("output guard", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 {
			return jinja.Undefined(), fmt.Errorf("output guard: %d values", len(args))
		}
		if err := g.check(); err != nil {
			return empty, err
		}
		return args[0], g.addOutput(valueSize(args[0]))
	})
	data[guardPrefix+"val"] = jinja.NewCallable("value guard", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		if len(args) != 1 {
			return jinja.Undefined(), fmt.Errorf("value guard: %d values", len(args))
		}
		if err := g.check(); err != nil {
			return empty, err
		}
		if int64(valueSize(args[0])) > g.lim.MaxOutput {
			return empty, g.fail("output size", fmt.Sprintf("%d bytes in one value", g.lim.MaxOutput))
		}
		return args[0], nil
	})
	data["range"] = jinja.NewCallable("range", g.rangeFunc)
	g.installOps(data)
}

func intArg(args []jinja.Value) int {
	if len(args) == 1 && args[0].IsInt() {
		return int(args[0].AsInt())
	}
	return 0
}

// valueSize is about how many bytes v prints as: exact for strings, a
// shallow estimate for containers (their items were counted when set).
func valueSize(v jinja.Value) int {
	switch {
	case v.IsString():
		return len(v.AsString())
	case v.IsList():
		n := 2
		for _, it := range v.AsList().Items {
			n += 2
			if it.IsString() {
				n += len(it.AsString())
			} else {
				n += 8
			}
		}
		return n
	case v.IsDict():
		d := v.AsDict()
		n := 2
		for _, k := range d.Keys {
			n += len(k) + 4
			if it, _ := d.Get(k); it.IsString() {
				n += len(it.AsString())
			} else {
				n += 8
			}
		}
		return n
	}
	return 8
}

// rangeFunc is Python's range, refusing to build more items than a render
// may iterate: the engine's own would allocate range(10**12) in full.
func (g *guard) rangeFunc(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	var n [3]int64
	for i, a := range args {
		if i >= 3 {
			break
		}
		switch {
		case a.IsInt():
			n[i] = a.AsInt()
		case a.IsFloat() && a.AsFloat() == float64(int64(a.AsFloat())):
			n[i] = int64(a.AsFloat()) // 10**12 is a float in this engine
		case a.IsBool() && a.AsBool():
			n[i] = 1
		case a.IsBool():
		default:
			return jinja.Undefined(), fmt.Errorf("range: %s is not an integer", a.String())
		}
	}
	var start, stop, step int64
	switch len(args) {
	case 1:
		stop, step = n[0], 1
	case 2:
		start, stop, step = n[0], n[1], 1
	case 3:
		start, stop, step = n[0], n[1], n[2]
	default:
		return jinja.Undefined(), fmt.Errorf("range: expected 1-3 arguments, got %d", len(args))
	}
	if step == 0 {
		return jinja.Undefined(), fmt.Errorf("range: step must not be zero")
	}
	var count int64
	switch {
	case step > 0 && stop > start:
		count = (stop-start-1)/step + 1
	case step < 0 && stop < start:
		count = (start-stop-1)/(-step) + 1
	}
	if count < 0 || count > g.lim.MaxIterations {
		return jinja.Undefined(), g.fail("loop iterations", fmt.Sprintf("%d; range() of %d items", g.lim.MaxIterations, count))
	}
	items := make([]jinja.Value, count)
	for i := range items {
		items[i] = jinja.NewInt(start + int64(i)*step)
	}
	return jinja.NewList(items), nil
}
