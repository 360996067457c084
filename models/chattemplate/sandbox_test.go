package chattemplate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The hostile templates of issue 17: each once took the process down (a
// Go stack overflow, a render that never ends, 23 GB of output).
const (
	hostileRecursion = `{% macro r(n) %}{{ r(n+1) }}{% endmacro %}{{ r(0) }}`
	hostileLoop      = `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`
	hostileOutput    = `{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}`
)

func renderHostile(t *testing.T, src string, lim Limits) (string, error) {
	t.Helper()
	tpl, err := Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	tpl.Limits = lim
	return tpl.Render(Input{Messages: []Message{{"role": "user", "content": "hi"}}})
}

func TestSandboxLimits(t *testing.T) {
	for _, c := range []struct {
		name, src, limit string
	}{
		{"recursion", hostileRecursion, "recursion depth"},
		{"loop", hostileLoop, "loop iterations"},
		{"output", hostileOutput, "output size"},
		{"huge range", `{{ range(10**12) | length }}`, "loop iterations"},
		{"doubling value", `{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}`, "output size"},
		{"static text in loops", `{% for i in range(900000) %}0123456789012345678901234567890123456789{% endfor %}`, "output size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderHostile(t, c.src, Limits{})
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("got %d bytes, err %v; want a LimitError", len(out), err)
			}
			if le.Limit != c.limit {
				t.Errorf("limit %q, want %q", le.Limit, c.limit)
			}
			msg := err.Error()
			if !strings.Contains(msg, `chat template "default"`) || !strings.Contains(msg, c.limit) {
				t.Errorf("message %q does not name the template and the limit", msg)
			}
		})
	}
}

func TestSandboxTime(t *testing.T) {
	// A loop within the iteration limit that still runs long: the clock
	// stops it. Each iteration does a little work so 64-tick clock checks
	// see time pass.
	_, err := renderHostile(t, `{% for i in range(900000) %}{{ (i|string)[:0] }}{% endfor %}`, Limits{MaxTime: time.Millisecond})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "time" {
		t.Fatalf("err %v, want the time limit", err)
	}
}

func TestSandboxCancel(t *testing.T) {
	tpl, err := Parse(hostileLoop)
	if err != nil {
		t.Fatal(err)
	}
	tpl.Limits = Limits{MaxIterations: 1 << 62, MaxTime: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tpl.RenderContext(ctx, Input{})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	// The bound is generous; without the guard the render runs for days.
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("render ignored cancellation")
	}
}

// Deeply nested source would recurse in the engine's parser; Parse refuses.
func TestSandboxStaticNesting(t *testing.T) {
	for _, src := range []string{
		"{{ " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + " }}",
		strings.Repeat("{% if true %}", 5000) + strings.Repeat("{% endif %}", 5000),
	} {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), "nested") {
			t.Errorf("err %v, want a nesting refusal", err)
		}
	}
}

// The guard must not change what normal templates print; TestGolden checks
// real templates, this the whitespace corners around the inserted calls.
func TestSandboxTransparent(t *testing.T) {
	for src, want := range map[string]string{
		"{% for i in range(3) %}\n  {{ i }}\n{% endfor %}\n":                   "  0\n  1\n  2\n",
		"{%- for i in range(2) -%}\n\n {{- i -}} \n{%- endfor %}!":             "01!",
		"{% macro m(x) %}\n[{{ x }}]\n{% endmacro %}{{ m(1) }}{{ m(2) }}":      "[1]\n[2]\n",
		"{% set a = 'x' ~ 'y' %}{% set b = a == 'xy' %}{{ a }}{{ b }}":         "xyTrue",
		"{% set s %}in{% endset %}{{ s }}{% raw %}{{ r }}{% endraw %}":         "in{{ r }}",
		"{{ range(5, 0, -2) | join(',') }} {{ range(0) | length }}{{ 'a=b' }}": "5,3,1 0a=b",
		"{% if 1 == 1 %}{{ '%}' }}{% endif %}":                                 "%}",
	} {
		got, err := renderHostile(t, src, Limits{})
		if err != nil || got != want {
			t.Errorf("%q:\n got %q, %v\nwant %q", src, got, err, want)
		}
	}
}
