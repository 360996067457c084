package chattemplate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ardan "github.com/ardanlabs/jinja"
	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// TestEngineComparison measures the two Go Jinja engines considered, as is,
// with only the HF globals (raise_exception, strftime_now) supplied, against
// the goldens. The choice rests on the counts recorded in doc.go; the test
// fails when they no longer hold (a dependency upgrade, new goldens), so
// the record is re-measured rather than left stale.
func TestEngineComparison(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this measurement renders every golden with both candidate Jinja engines")
	}
	dir, cases := readGolden(t)
	ardanPass, gonjaPass := 0, 0
	for _, c := range cases {
		src, err := os.ReadFile(filepath.Join(dir, "templates", c.Template+".jinja"))
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := "", ""
		if c.Expected != nil {
			want = *c.Expected
		}
		if c.Error != nil {
			wantErr = *c.Error
		}
		ok := func(got string, err error) bool {
			if wantErr != "" {
				return err != nil && strings.Contains(err.Error(), wantErr)
			}
			return err == nil && got == want
		}
		if ok(renderArdan(string(src), c)) {
			ardanPass++
		}
		if ok(renderGonja(string(src), c)) {
			gonjaPass++
		}
	}
	t.Logf("ardanlabs/jinja v1.8.0: %d/%d; gonja/v2 v2.9.1: %d/%d", ardanPass, len(cases), gonjaPass, len(cases))
	if ardanPass != 120 || gonjaPass != 92 || len(cases) != 132 {
		t.Errorf("doc.go records ardanlabs/jinja 120/132 and gonja 92/132; measured %d/%d and %d/%d: update the record",
			ardanPass, len(cases), gonjaPass, len(cases))
	}
}

func toArdan(v any) ardan.Value {
	switch x := v.(type) {
	case *Object:
		d := ardan.NewDict()
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			d.AsDict().Set(k, toArdan(e))
		}
		return d
	case Message:
		d := ardan.NewDict()
		for _, k := range sortedKeys(x) {
			d.AsDict().Set(k, toArdan(x[k]))
		}
		return d
	case []any:
		items := make([]ardan.Value, len(x))
		for i, e := range x {
			items[i] = toArdan(e)
		}
		return ardan.NewList(items)
	}
	return ardan.FromGoValue(v)
}

func renderArdan(src string, c goldenCase) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	tpl, err := ardan.Compile(src)
	if err != nil {
		return "", err
	}
	data := map[string]ardan.Value{}
	msgs := make([]any, len(c.Messages))
	for i, m := range c.Messages {
		msgs[i] = m
	}
	data["messages"] = toArdan(msgs)
	if c.Tools != nil {
		data["tools"] = toArdan(c.Tools)
	} else {
		data["tools"] = ardan.None()
	}
	data["add_generation_prompt"] = ardan.NewBool(c.AddGenerationPrompt)
	data["strftime_now"] = ardan.NewCallable("strftime_now", func([]ardan.Value, map[string]ardan.Value) (ardan.Value, error) {
		return ardan.NewString("26 Jul 2024"), nil
	})
	for k, v := range c.extra() {
		data[k] = toArdan(v)
	}
	return tpl.RenderValues(data)
}

func toPlain(v any) any {
	switch x := v.(type) {
	case *Object:
		m := map[string]any{}
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			m[k] = toPlain(e)
		}
		return m
	case Message:
		m := map[string]any{}
		for k, e := range x {
			m[k] = toPlain(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toPlain(e)
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func renderGonja(src string, c goldenCase) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	tpl, err := gonja.FromString(src)
	if err != nil {
		return "", err
	}
	msgs := make([]any, len(c.Messages))
	for i, m := range c.Messages {
		msgs[i] = toPlain(m)
	}
	data := map[string]any{
		"messages":              msgs,
		"tools":                 toPlain(c.Tools),
		"add_generation_prompt": c.AddGenerationPrompt,
		"raise_exception":       func(msg string) (string, error) { return "", fmt.Errorf("%s", msg) },
		"strftime_now":          func(string) string { return "26 Jul 2024" },
	}
	if c.Tools == nil {
		data["tools"] = nil
	}
	for k, v := range c.extra() {
		data[k] = toPlain(v)
	}
	return tpl.ExecuteToString(exec.NewContext(data))
}
