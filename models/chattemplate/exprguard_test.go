package chattemplate

import (
	"errors"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// One expression that would allocate far more than the output limit is
// refused before the engine builds it: before the guard saw operators,
// 'x' * 100000000000 was one strings.Repeat of 100 GB. Each case runs in
// this process, so a regression shows as an out-of-memory crash or a
// multi-gigabyte allocation rather than a wrong answer.
func TestSandboxRefusesHugeExpressions(t *testing.T) {
	for _, c := range []struct{ name, src, limit string }{
		{"string repeat", `{{ 'x' * 100000000000 }}`, "output size"},
		{"repeat in a condition", `{% if 'x' * 100000000000 %}y{% endif %}`, "output size"},
		{"repeat in a loop header", `{% for c in 'x' * 100000000000 %}{% endfor %}`, "output size"},
		{"repeat in a set", `{% set y = ('ab' * 1000) * 100000000 %}`, "output size"},
		{"repeat of a variable", `{% set n = 100000000000 %}{{ bos_token * n }}`, "output size"},
		{"huge range as list", `{{ range(10**12) | list | length }}`, "loop iterations"},
		{"join multiplies", `{{ range(1000) | list | join('x' * 100000) | length }}`, "output size"},
		{"join keyword", `{{ range(1000) | join(d='x' * 100000) | length }}`, "output size"},
		{"indent", `{{ 'a' | indent(100000000000) }}`, "output size"},
		{"indent per line", `{{ ('a\n' * 1000000) | indent(100) | length }}`, "output size"},
		{"replace filter", `{{ ('x' * 1000000) | replace('', 'y' * 30) | length }}`, "output size"},
		{"replace method", `{{ ('x' * 1000000).replace('x', 'y' * 30) | length }}`, "output size"},
		{"split method", `{{ ('x' * 10000000).split('') | length }}`, "loop iterations"},
		{"list of a string", `{{ ('x' * 10000000) | list | length }}`, "loop iterations"},
		{"concatenation", `{{ ('x' * 10000000 + 'y' * 10000000) | length }}`, "output size"},
		{"tilde", `{{ ('x' * 10000000 ~ 'y' * 10000000) | length }}`, "output size"},
		{"macro default", `{% macro m(a='x' * 100000000000) %}{{ a | length }}{% endmacro %}{{ m() }}`, "output size"},
		{"call argument", `{% macro m(a) %}{{ caller() }}{% endmacro %}{% call m('x' * 100000000000) %}y{% endcall %}`, "output size"},
		{"list concatenation", `{% set a = range(900000) | list %}{{ (a + a) | length }}`, "loop iterations"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Parse(c.src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			tpl.Defaults = map[string]any{"bos_token": "<s>"}
			out, err := tpl.Render(Input{})
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got %d bytes, err %v; want a LimitError", len(out), err)
			}
			if le.Limit != c.limit || !strings.Contains(err.Error(), `chat template "default"`) || !strings.Contains(err.Error(), c.limit) {
				t.Errorf("%v: want the template and the %s limit named", err, c.limit)
			}
		})
	}
	tpl, _ := Parse(`{{ [1] | tojson(indent=100000000000) }}`)
	if _, err := tpl.Render(Input{}); err == nil || !strings.Contains(err.Error(), "indent") || !strings.Contains(err.Error(), `chat template "default"`) {
		t.Errorf("tojson with a huge indent: %v", err)
	}
}

// The rewrite must leave what expressions mean to the engine alone: each is
// rendered by the bare engine and through the sandbox.
func TestSandboxExpressionsUnchanged(t *testing.T) {
	for _, src := range []string{
		`{{ 3 * 4 + 2 ~ 'z' }}|{{ 2 + 3 * 4 - 1 }}|{{ 10 - 2 - 3 }}|{{ 7 // 2 * 3 }}|{{ 2 ** 3 * 2 }}|{{ -2 * -3 }}`,
		`{{ 'ab' * 3 }}|{{ 3 * 'ab' }}|{{ 'a' + 'b' * 2 ~ 'c' }}|{{ 'n=' + 1|string }}|{{ 1.5 * 2 }}|{{ 'x' * 10**2 }}`,
		`{{ [1, 2] + [3] }}|{{ (1, 2) }}|{{ {'a': 1 + 1}['a'] }}|{{ [1,2,3][::-1] }}|{{ [1,2,3][1:] }}|{{ 'abc'[1] }}`,
		`{{ 'x' if 1 > 2 else 'y' * 3 }}|{{ not 1 + 1 == 2 }}|{{ 1 in [1] and 'a' ~ 'b' is string }}|{{ 4 is sameas(4) }}|{{ x is not defined }}`,
		`{{ 'a,b'.split(',') }}|{{ ' a b '.split() }}|{{ 'abc'.split('') }}|{{ 'abc'.replace('b', 'x' * 2) }}|{{ 'aaa'.replace('a', 'b', 2) }}`,
		`{{ ['a', 'b'] | join('-') }}|{{ [1, none, true, 2.5] | join }}|{{ [{'n': 'x'}, {'n': 'y'}] | join(',', attribute='n') }}|{{ 'ab' | join('-') }}`,
		`{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(width=3, first=true) }}|{{ 'abab' | replace('a', 'x') }}|{{ 'abab' | replace('a', 'x', 1) }}`,
		`{{ 'héllo' | list }}|{{ [1] | list }}|{{ 3 | list }}|{{ ('a' ~ 1) | upper }}|{{ namespace(x=1 + 2).x }}`,
		`{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s + m.role[0] * 2 %}{% endfor %}{{ ns.s }}`,
		`{% macro m(a='-' * 2, b=1 + 1) %}{{ a ~ b }}{{ caller() if caller is defined }}{% endmacro %}{{ m() }}{{ m('x', b=3 * 2) }}{% call m('c' ~ 1) %}in{% endcall %}`,
		`{% for i in range(3) if i * 2 > 1 %}{{ loop.index0 + 1 }}{% endfor %}{% if messages | length * 2 > 1 %}!{% elif 1 + 1 %}?{% endif %}`,
	} {
		raw, err := jinja.Compile(src)
		if err != nil {
			t.Fatalf("%s: bare engine: %v", src, err)
		}
		msgs := jinja.NewList([]jinja.Value{messageValue(Message{"role": "user", "content": "hi"}), messageValue(Message{"role": "assistant", "content": "yo"})})
		want, err := raw.RenderValues(map[string]jinja.Value{"messages": msgs})
		if err != nil {
			t.Fatalf("%s: bare engine: %v", src, err)
		}
		tpl, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := tpl.Render(Input{Messages: []Message{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}}})
		if err != nil || got != want {
			t.Errorf("%s\n sandbox %q, %v\n engine  %q", src, got, err, want)
		}
	}
}
