package chattemplate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fuzzLimits are tight so each input renders in milliseconds; the point is
// that the limits hold for any template, not what their values are.
var fuzzLimits = Limits{MaxDepth: 30, MaxIterations: 5000, MaxOutput: 64 << 10, MaxTime: 2 * time.Second}

var fuzzMessages = []Message{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "more"}}

// renderBounded renders tpl under fuzzLimits and checks the output bound:
// guarded output plus, at most, the template's own text once.
func renderBounded(t *testing.T, tpl *Template, srcLen int) {
	tpl.Limits = fuzzLimits
	out, err := tpl.Render(Input{Messages: fuzzMessages, AddGenerationPrompt: true, Tools: []any{map[string]any{"name": "f"}}})
	if err == nil && int64(len(out)) > fuzzLimits.MaxOutput+int64(srcLen) {
		t.Fatalf("%d bytes of output, over the %d-byte limit", len(out), fuzzLimits.MaxOutput)
	}
}

// FuzzTemplate renders arbitrary template source in the sandbox: an error
// or bounded output, never a panic, a stack overflow or a hang.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
		"{% macro r(n) %}{{ r(n+1) }}{% endmacro %}{{ r(0) }}",
		"{% for i in range(100) %}{% for j in range(100) %}{{ i*j }}{% endfor %}{% endfor %}",
		"{% set ns = namespace(s='x') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
		"{{ tools | tojson(indent=2) }}{{ raise_exception('no') if messages | length > 9 }}",
		"{%- for m in messages -%}{%- if loop.first and m.role == 'system' -%}[{{ m.content }}]{%- else -%}{{ m.content ~ '|' }}{%- endif -%}{%- endfor -%}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			return
		}
		renderBounded(t, tpl, len(src))
	})
}

// FuzzTokenizerConfigTemplate loads arbitrary tokenizer_config.json files
// the way a model download is loaded, and renders what it finds.
func FuzzTokenizerConfigTemplate(f *testing.F) {
	for _, s := range []string{
		`{"chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}", "bos_token": "<s>"}`,
		`{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "{{ tools[0].name }}"}], "eos_token": {"content": "</s>"}}`,
		`{"chat_template": null}`,
		`{"chat_template": 7, "bos_token": [1]}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		tpl, err := FromTokenizerConfig(dir)
		if err != nil {
			return
		}
		renderBounded(t, tpl, len(data))
	})
}
