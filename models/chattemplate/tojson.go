package chattemplate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// tojsonName is what "| tojson" is renamed to in templates, because the
// engine's built-in filters shadow user-supplied ones of the same name.
const tojsonName = "hark_tojson"

// rewriteFilters renames the tojson filter inside {{ }} and {% %} tags,
// leaving text, comments and string literals alone.
func rewriteFilters(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); {
		open := strings.IndexByte(src[i:], '{')
		if open < 0 || i+open+1 >= len(src) {
			b.WriteString(src[i:])
			break
		}
		open += i
		b.WriteString(src[i:open])
		var closer string
		switch src[open+1] {
		case '{':
			closer = "}}"
		case '%':
			closer = "%}"
		case '#':
			end := strings.Index(src[open+2:], "#}")
			if end < 0 {
				b.WriteString(src[open:])
				return b.String()
			}
			end += open + 4
			b.WriteString(src[open:end])
			i = end
			continue
		default:
			b.WriteByte('{')
			i = open + 1
			continue
		}
		body, end := rewriteTag(src, open+2, closer)
		b.WriteString(src[open : open+2])
		b.WriteString(body)
		i = end
	}
	return b.String()
}

// rewriteTag scans a tag body from start until closer (outside quotes) and
// returns the rewritten body with its closer, and the index after it.
func rewriteTag(src string, start int, closer string) (string, int) {
	var body strings.Builder
	i := start
	var quote byte
	for i < len(src) {
		c := src[i]
		if quote != 0 {
			body.WriteByte(c)
			if c == '\\' && i+1 < len(src) {
				body.WriteByte(src[i+1])
				i += 2
				continue
			}
			if c == quote {
				quote = 0
			}
			i++
			continue
		}
		if strings.HasPrefix(src[i:], closer) || (c == '-' && strings.HasPrefix(src[i+1:], closer)) {
			break
		}
		switch c {
		case '\'', '"':
			quote = c
		case '|':
			j := i + 1
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n') {
				j++
			}
			if strings.HasPrefix(src[j:], "tojson") && !isIdent(src, j+len("tojson")) {
				body.WriteString("| " + tojsonName)
				i = j + len("tojson")
				continue
			}
			if name := identAt(src, j); boundedFilters[name] != "" {
				body.WriteString("| " + boundedFilters[name])
				i = j + len(name)
				continue
			}
		}
		body.WriteByte(c)
		i++
	}
	end := i
	if end < len(src) {
		if src[end] == '-' {
			end++
		}
		end += len(closer)
		if end > len(src) {
			end = len(src)
		}
	}
	return body.String() + src[i:end], end
}

// identAt is the identifier starting at s[i], or "".
func identAt(s string, i int) string {
	j := i
	for isIdent(s, j) {
		j++
	}
	return s[i:j]
}

func isIdent(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// maxJSONIndent bounds tojson's indent; real templates use 2 or 4.
const maxJSONIndent = 64

// jsonOpts mirrors the json.dumps arguments transformers' tojson accepts.
type jsonOpts struct {
	indent   string
	indented bool
	itemSep  string
	keySep   string
	sortKeys bool
}

// tojsonFilter implements transformers' tojson: json.dumps with
// ensure_ascii=False and the caller's key order, indent and separators.
func tojsonFilter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.Undefined(), fmt.Errorf("tojson: missing value")
	}
	o := jsonOpts{itemSep: ", ", keySep: ": "}
	indent, hasIndent := kwargs["indent"]
	if !hasIndent && len(args) > 2 { // tojson(x, ensure_ascii, indent)
		indent, hasIndent = args[2], true
	}
	if hasIndent && !indent.IsNone() && !indent.IsUndefined() {
		o.indented = true
		o.itemSep = ","
		switch {
		case indent.IsInt() && indent.AsInt() > maxJSONIndent:
			// Repeated at every line of the output: bounded before it is built.
			return jinja.Undefined(), fmt.Errorf("tojson: indent %d is over the %d allowed", indent.AsInt(), maxJSONIndent)
		case indent.IsInt():
			o.indent = strings.Repeat(" ", max(0, int(indent.AsInt()))) // Python: " " * -1 is ""
		case indent.IsString():
			o.indent = indent.AsString()
		default:
			return jinja.Undefined(), fmt.Errorf("tojson: indent must be an int or string")
		}
	}
	if seps, ok := kwargs["separators"]; ok && !seps.IsNone() && !seps.IsUndefined() {
		if !seps.IsList() || seps.AsList().Len() != 2 {
			return jinja.Undefined(), fmt.Errorf("tojson: separators must be a pair of strings")
		}
		o.itemSep, o.keySep = plainString(seps.AsList().Items[0]), plainString(seps.AsList().Items[1])
	}
	if sk, ok := kwargs["sort_keys"]; ok {
		o.sortKeys = sk.IsTruthy()
	}
	var b strings.Builder
	if err := o.encode(&b, args[0], 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(b.String()), nil
}

func (o *jsonOpts) newline(b *strings.Builder, level int) {
	if !o.indented {
		return
	}
	b.WriteByte('\n')
	for i := 0; i < level; i++ {
		b.WriteString(o.indent)
	}
}

func (o *jsonOpts) encode(b *strings.Builder, v jinja.Value, level int) error {
	switch {
	case v.IsNone(), v.IsUndefined():
		b.WriteString("null")
	case v.IsBool():
		if v.AsBool() {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		b.WriteString(pyFloat(v.AsFloat()))
	case v.IsString():
		writeJSONString(b, v.AsString())
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range items {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			o.newline(b, level+1)
			if err := o.encode(b, e, level+1); err != nil {
				return err
			}
		}
		o.newline(b, level)
		b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		if o.sortKeys {
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(o.itemSep)
			}
			o.newline(b, level+1)
			writeJSONString(b, k)
			b.WriteString(o.keySep)
			e, _ := d.Get(k)
			if err := o.encode(b, e, level+1); err != nil {
				return err
			}
		}
		o.newline(b, level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: cannot encode %s", v.String())
	}
	return nil
}

// pyFloat formats like Python's float repr: shortest round-trip digits,
// fixed notation for exponents in [-4, 16) with a trailing ".0" when
// integral, scientific otherwise.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	return e
}

// writeJSONString escapes like json.dumps(ensure_ascii=False): only quotes,
// backslashes and control characters; no HTML escaping.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	b.WriteByte('"')
}
