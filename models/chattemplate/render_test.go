package chattemplate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goldenClock is the date the goldens were rendered with ("26 Jul 2024").
func goldenClock() time.Time { return time.Date(2024, 7, 26, 12, 0, 0, 0, time.UTC) }

func TestGolden(t *testing.T) {
	dir, cases := readGolden(t)
	parsed := map[string]*Template{}
	pass := 0
	for _, c := range cases {
		tpl, ok := parsed[c.Template]
		if !ok {
			src, err := os.ReadFile(filepath.Join(dir, "templates", c.Template+".jinja"))
			if err != nil {
				t.Fatal(err)
			}
			if tpl, err = Parse(string(src)); err != nil {
				t.Fatalf("%s: %v", c.Template, err)
			}
			tpl.Now = goldenClock
			parsed[c.Template] = tpl
		}
		got, err := tpl.Render(Input{Messages: c.Messages, Tools: c.Tools, AddGenerationPrompt: c.AddGenerationPrompt, Extra: c.extra()})
		switch {
		case c.Error != nil:
			if err == nil {
				t.Errorf("%s: want error %q, rendered %q", c.ID, *c.Error, got)
				continue
			}
			if err.Error() != *c.Error {
				t.Errorf("%s: error %q, want %q", c.ID, err, *c.Error)
				continue
			}
		case err != nil:
			t.Errorf("%s: %v", c.ID, err)
			continue
		case got != *c.Expected:
			t.Errorf("%s:\n got %q\nwant %q", c.ID, got, *c.Expected)
			continue
		}
		pass++
	}
	t.Logf("chat-template goldens: %d/%d pass", pass, len(cases))
}

func TestRewriteFilters(t *testing.T) {
	src := `{{ x | tojson }}{# | tojson #}{% set y = z|tojson(indent=2) %}'| tojson'{{ "| tojson" ~ a|tojsonish }}`
	got := rewriteFilters(src)
	want := `{{ x | hark_tojson }}{# | tojson #}{% set y = z| hark_tojson(indent=2) %}'| tojson'{{ "| tojson" ~ a|tojsonish }}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStrftime(t *testing.T) {
	tm := time.Date(2024, 7, 6, 9, 5, 3, 0, time.UTC)
	for f, want := range map[string]string{
		"%d %b %Y":       "06 Jul 2024",
		"%-d %B %Y":      "6 July 2024",
		"%Y-%m-%d %H:%M": "2024-07-06 09:05",
		"%A %I %p %%":    "Saturday 09 AM %",
	} {
		if got := strftime(tm, f); got != want {
			t.Errorf("strftime(%q) = %q, want %q", f, got, want)
		}
	}
}

func TestFromTokenizerConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromTokenizerConfig(dir); err != ErrNoTemplate {
		t.Fatalf("empty dir: err = %v, want ErrNoTemplate", err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"bos_token": {"content": "<s>"}, "chat_template": [
		{"name": "default", "template": "{{ bos_token }}D{{ messages|length }}"},
		{"name": "tool_use", "template": "T{{ tools[0].name }}"}]}`)
	tpl, err := FromTokenizerConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{"role": "user", "content": "hi"}}
	if got, err := tpl.Render(Input{Messages: msgs}); err != nil || got != "<s>D1" {
		t.Errorf("default: %q, %v", got, err)
	}
	if got, err := tpl.Render(Input{Messages: msgs, Tools: []any{map[string]any{"name": "f"}}}); err != nil || got != "Tf" {
		t.Errorf("tool_use: %q, %v", got, err)
	}
	write(`{"chat_template": 5}`)
	if _, err := FromTokenizerConfig(dir); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
		t.Errorf("bad chat_template: err = %v", err)
	}
}

// TestRealConfigs renders the golden cases of the three shipped models
// through FromTokenizerConfig, so the config path (and its bos/eos
// defaults) is held to the same outputs as the bare templates.
func TestRealConfigs(t *testing.T) {
	_, cases := readGolden(t)
	n := 0
	for _, name := range []string{"qwen3", "llama3", "gemma3"} {
		tpl, err := FromTokenizerConfig(filepath.Join(mlxAssets(t), "tokenizers", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tpl.Now = goldenClock
		for _, c := range cases {
			if c.Template != name {
				continue
			}
			n++
			got, err := tpl.Render(Input{Messages: c.Messages, Tools: c.Tools, AddGenerationPrompt: c.AddGenerationPrompt, Extra: c.extra()})
			if c.Error != nil {
				if err == nil || err.Error() != *c.Error {
					t.Errorf("%s: err %v, want %q", c.ID, err, *c.Error)
				}
				continue
			}
			if err != nil || got != *c.Expected {
				t.Errorf("%s: err %v\n got %q\nwant %q", c.ID, err, got, *c.Expected)
			}
		}
	}
	if n == 0 {
		t.Fatal("no golden cases for the shipped configs")
	}
}
