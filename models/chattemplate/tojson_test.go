package chattemplate

import (
	"strings"
	"testing"
)

func renderOne(t *testing.T, src string, vars map[string]any) string {
	t.Helper()
	tpl, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tpl.Render(Input{Extra: vars})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestToJSONPythonSemantics(t *testing.T) {
	v, err := DecodeJSON([]byte(`{"z": "é <b>&\n\"", "a": [1, 2.5, 1e20, 3.0, true, null], "m": {}, "l": []}`))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"v": v}
	cases := map[string]string{
		`{{ v | tojson }}`:                          `{"z": "é <b>&\n\"", "a": [1, 2.5, 1e+20, 3.0, true, null], "m": {}, "l": []}`,
		`{{ v | tojson(indent=2) }}`:                "{\n  \"z\": \"é <b>&\\n\\\"\",\n  \"a\": [\n    1,\n    2.5,\n    1e+20,\n    3.0,\n    true,\n    null\n  ],\n  \"m\": {},\n  \"l\": []\n}",
		`{{ v.a | tojson(separators=[",", ":"]) }}`: `[1,2.5,1e+20,3.0,true,null]`,
		`{{ v.m | tojson(sort_keys=true) }}{{ {"b": 1, "a": 2} | tojson(sort_keys=true) }}`: `{}{"a": 2, "b": 1}`,
	}
	for src, want := range cases {
		if got := renderOne(t, src, vars); got != want {
			t.Errorf("%s:\n got %s\nwant %s", src, got, want)
		}
	}
	// "\u" escaping is limited to control characters, in lowercase hex.
	if got := renderOne(t, `{{ s | tojson }}`, map[string]any{"s": "\x01\u2028"}); got != "\"\\u0001\u2028\"" {
		t.Errorf("control escape: %q", got)
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 1e15: "1000000000000000.0", 1e16: "1e+16", 0.0001: "0.0001", 0.00001: "1e-05", -2.5: "-2.5", 1.0 / 3: "0.3333333333333333"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestMessagesKeepArbitraryJSON renders content given as a list of parts and
// tool calls with nested arguments, all decoded from JSON.
func TestMessagesKeepArbitraryJSON(t *testing.T) {
	var msgs []Message
	for _, js := range []string{
		`{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image"}]}`,
		`{"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f", "arguments": {"y": 1, "x": "two"}}}]}`,
	} {
		var m Message
		if err := m.UnmarshalJSON([]byte(js)); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	tpl, err := Parse(`{% for m in messages %}{{ m.role }}:{% if m.content is string %}{{ m.content }}{% elif m.content %}` +
		`{% for p in m.content %}[{{ p.type }}{% if p.text is defined %}={{ p.text }}{% endif %}]{% endfor %}{% endif %}` +
		`{% for c in m.tool_calls | default([]) %}{{ c.function.name }}{{ c.function.arguments | tojson }}{% endfor %};{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(Input{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if want := `user:[text=look][image];assistant:f{"y": 1, "x": "two"};`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestRaiseExceptionMessage(t *testing.T) {
	tpl, err := Parse(`{{ raise_exception("Only user and assistant roles are supported!") }}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(Input{})
	var te *TemplateError
	if err == nil || !strings.Contains(err.Error(), "Only user") || !asTemplateError(err, &te) {
		t.Fatalf("err = %v, want a *TemplateError", err)
	}
}

func asTemplateError(err error, te **TemplateError) bool {
	e, ok := err.(*TemplateError)
	*te = e
	return ok
}
