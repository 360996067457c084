package chattemplate

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// The guard's half of exprguard.go: checks on the operands of the
// operators that build values, and bounded copies of the string methods
// and filters that can multiply a value's size. Each refuses before
// anything is allocated, naming the template and the limit.

// boundedFilters are the engine's filters that can build a value far
// larger than their input; rewriteFilters renames them to these copies.
var boundedFilters = map[string]string{
	"join":    "hark_join",
	"indent":  "hark_indent",
	"replace": "hark_replace",
	"list":    "hark_list",
}

// printString is the engine's str() of a value (its printValue).
func printString(v jinja.Value) string {
	switch {
	case v.IsUndefined(), v.IsNone(), v.IsCallable():
		return ""
	case v.IsBool():
		if v.AsBool() {
			return "True"
		}
		return "False"
	case v.IsInt():
		return fmt.Sprintf("%d", v.AsInt())
	case v.IsFloat():
		return fmt.Sprintf("%g", v.AsFloat())
	case v.IsString():
		return v.AsString()
	}
	return v.String()
}

// bigValue fails the render when one value would be over MaxOutput bytes.
func (g *guard) bigValue(size int64, what string) error {
	if size > g.lim.MaxOutput || size < 0 {
		return g.fail("output size", fmt.Sprintf("%d bytes in one value; %s would make %d", g.lim.MaxOutput, what, size))
	}
	return nil
}

// manyItems fails the render when one list would hold more items than a
// render may iterate.
func (g *guard) manyItems(n int64, what string) error {
	if n > g.lim.MaxIterations || n < 0 {
		return g.fail("loop iterations", fmt.Sprintf("%d; %s would make %d items", g.lim.MaxIterations, what, n))
	}
	return nil
}

// mulSize is the length of s repeated n times, saturating instead of
// overflowing.
func mulSize(s, n int64) int64 {
	if s == 0 || n <= 0 {
		return 0
	}
	if n > (1<<62)/s {
		return 1 << 62
	}
	return s * n
}

func (g *guard) installOps(data map[string]jinja.Value) {
	one := func(name string, fn func(jinja.Value) error) {
		data[guardPrefix+name] = jinja.NewCallable(name+" guard", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 {
				return jinja.Undefined(), fmt.Errorf("%s guard: %d values", name, len(args))
			}
			if err := g.check(); err != nil {
				return jinja.Undefined(), err
			}
			return args[0], fn(args[0])
		})
	}
	one("l", func(v jinja.Value) error {
		g.operands = append(g.operands, v)
		return nil
	})
	pop := func() jinja.Value {
		if len(g.operands) == 0 {
			return jinja.Undefined()
		}
		v := g.operands[len(g.operands)-1]
		g.operands = g.operands[:len(g.operands)-1]
		return v
	}
	one("rmul", func(b jinja.Value) error {
		if a := pop(); a.IsString() && b.IsInt() {
			return g.bigValue(mulSize(int64(len(a.AsString())), b.AsInt()), "a string repeated")
		}
		return nil
	})
	one("radd", func(b jinja.Value) error {
		a := pop()
		switch {
		case a.IsString() || b.IsString():
			return g.bigValue(int64(valueSize(a))+int64(valueSize(b)), "a concatenation")
		case a.IsList() && b.IsList():
			return g.manyItems(int64(a.AsList().Len())+int64(b.AsList().Len()), "a list concatenation")
		}
		return nil
	})
	one("rcat", func(b jinja.Value) error {
		return g.bigValue(int64(valueSize(pop()))+int64(valueSize(b)), "a concatenation")
	})
	data[guardPrefix+"sreplace"] = jinja.NewCallable("replace", g.stringReplace)
	data[guardPrefix+"ssplit"] = jinja.NewCallable("split", g.stringSplit)
	data["hark_join"] = jinja.NewCallable("join", g.filterJoin)
	data["hark_indent"] = jinja.NewCallable("indent", g.filterIndent)
	data["hark_replace"] = jinja.NewCallable("replace", g.filterReplace)
	data["hark_list"] = jinja.NewCallable("list", g.filterList)
}

// replaceSize is the length of strings.Replace(s, old, new, count).
func replaceSize(s, old, new string, count int) int64 {
	n := int64(strings.Count(s, old))
	if old == "" {
		n = int64(utf8.RuneCountInString(s)) + 1
	}
	if count >= 0 && int64(count) < n {
		n = int64(count)
	}
	return int64(len(s)) + n*(int64(len(new))-int64(len(old)))
}

func intOf(v jinja.Value) int {
	switch {
	case v.IsInt():
		return int(v.AsInt())
	case v.IsFloat():
		return int(v.AsFloat())
	case v.IsBool() && v.AsBool():
		return 1
	case v.IsString():
		var n int
		fmt.Sscanf(v.AsString(), "%d", &n)
		return n
	}
	return 0
}

// stringReplace is the engine's str.replace(old, new[, count]).
func (g *guard) stringReplace(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 || !args[0].IsString() {
		return jinja.Undefined(), fmt.Errorf("replace: not a string")
	}
	s := args[0].AsString()
	if len(args) < 3 {
		return jinja.NewString(s), nil
	}
	old, new, count := printString(args[1]), printString(args[2]), -1
	if len(args) > 3 {
		count = intOf(args[3])
	}
	if err := g.bigValue(replaceSize(s, old, new, count), "replace()"); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(strings.Replace(s, old, new, count)), nil
}

// stringSplit is the engine's str.split([sep]).
func (g *guard) stringSplit(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 || !args[0].IsString() {
		return jinja.Undefined(), fmt.Errorf("split: not a string")
	}
	s := args[0].AsString()
	var parts []string
	if len(args) == 1 {
		parts = strings.Fields(s)
	} else {
		sep := printString(args[1])
		n := int64(strings.Count(s, sep)) + 1
		if sep == "" {
			n = int64(utf8.RuneCountInString(s))
		}
		if err := g.manyItems(n, "split()"); err != nil {
			return jinja.Undefined(), err
		}
		parts = strings.Split(s, sep)
	}
	items := make([]jinja.Value, len(parts))
	for i, p := range parts {
		items[i] = jinja.NewString(p)
	}
	return jinja.NewList(items), nil
}

// filterJoin is the engine's join(sep, d=, attribute=).
func (g *guard) filterJoin(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewString(""), nil
	}
	if !args[0].IsList() {
		return jinja.NewString(printString(args[0])), nil
	}
	sep := ""
	if len(args) > 1 {
		sep = printString(args[1])
	}
	if d, ok := kwargs["d"]; ok {
		sep = printString(d)
	}
	attr := ""
	if a, ok := kwargs["attribute"]; ok {
		attr = printString(a)
	}
	items := args[0].AsList().Items
	size := mulSize(int64(len(sep)), int64(len(items)))
	parts := make([]string, len(items))
	for i, it := range items {
		if attr != "" && it.IsDict() {
			if v, ok := it.AsDict().Get(attr); ok {
				it = v
			}
		}
		size += int64(valueSize(it))
		if err := g.bigValue(size, "join()"); err != nil {
			return jinja.Undefined(), err
		}
		parts[i] = printString(it)
	}
	return jinja.NewString(strings.Join(parts, sep)), nil
}

// filterIndent is the engine's indent(width=4, first=False).
func (g *guard) filterIndent(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewString(""), nil
	}
	s := printString(args[0])
	width := 4
	if len(args) > 1 {
		width = intOf(args[1])
	}
	if w, ok := kwargs["width"]; ok {
		width = intOf(w)
	}
	first := len(args) > 2 && args[2].IsTruthy()
	if f, ok := kwargs["first"]; ok {
		first = f.IsTruthy()
	}
	if width < 0 {
		width = 0 // the engine would panic in strings.Repeat
	}
	if err := g.bigValue(int64(len(s))+mulSize(int64(width), int64(strings.Count(s, "\n")+1)), "indent()"); err != nil {
		return jinja.Undefined(), err
	}
	pad := strings.Repeat(" ", width)
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if (i > 0 || first) && line != "" {
			lines[i] = pad + line
		}
	}
	return jinja.NewString(strings.Join(lines, "\n")), nil
}

// filterReplace is the engine's replace(old, new[, count]).
func (g *guard) filterReplace(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) < 3 {
		return jinja.NewString(""), fmt.Errorf("replace: expected at least 3 arguments")
	}
	s, old, new, count := printString(args[0]), printString(args[1]), printString(args[2]), -1
	if len(args) > 3 {
		count = intOf(args[3])
	}
	if c, ok := kwargs["count"]; ok {
		count = intOf(c)
	}
	if err := g.bigValue(replaceSize(s, old, new, count), "replace()"); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(strings.Replace(s, old, new, count)), nil
}

// filterList is the engine's list: a string becomes its characters.
func (g *guard) filterList(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 0 {
		return jinja.NewList(nil), nil
	}
	v := args[0]
	switch {
	case v.IsList():
		return v, nil
	case v.IsString():
		s := v.AsString()
		if err := g.manyItems(int64(utf8.RuneCountInString(s)), "list() of a string"); err != nil {
			return jinja.Undefined(), err
		}
		items := make([]jinja.Value, 0, len(s))
		for _, r := range s {
			items = append(items, jinja.NewString(string(r)))
		}
		return jinja.NewList(items), nil
	}
	return jinja.NewList([]jinja.Value{v}), nil
}
