package chattemplate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// ErrNoTemplate means the model ships no chat template: it is a base model
// and should be prompted with raw text.
var ErrNoTemplate = errors.New("chattemplate: no chat_template in tokenizer_config.json")

// Template is a parsed chat template, possibly several named ones (HF allows
// a list such as "default" and "tool_use"). It is safe for concurrent use
// once configured.
type Template struct {
	named map[string]*jinja.Template
	// Defaults are variables every render gets unless Input.Extra overrides
	// them; FromTokenizerConfig sets bos_token, eos_token, etc.
	Defaults map[string]any
	// Now is the clock behind strftime_now; nil means time.Now. Tests pin it.
	Now func() time.Time
	// Limits bound every render (zero fields: DefaultLimits).
	Limits Limits
	// Source names where the template came from, for error messages.
	Source string

	texts []string // every template's source, for Mentions
}

// Input is one render request.
type Input struct {
	Messages            []Message
	Tools               []any // tool definitions as JSON-like values; nil for none
	AddGenerationPrompt bool
	// Extra holds more template variables, e.g. enable_thinking for Qwen3,
	// date_string for Llama 3.1, bos_token.
	Extra map[string]any
}

// Parse compiles a single template source.
func Parse(src string) (*Template, error) {
	t := &Template{named: map[string]*jinja.Template{}}
	if err := t.add("default", src); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Template) add(name, src string) error {
	t.texts = append(t.texts, src)
	guarded, err := sandbox(rewriteFilters(src))
	if err != nil {
		return fmt.Errorf("chattemplate: %s template refused: %w", name, err)
	}
	c, err := jinja.Compile(guarded)
	if err != nil {
		return fmt.Errorf("chattemplate: parse %s template: %w", name, err)
	}
	t.named[name] = c
	return nil
}

// FromTokenizerConfig loads the chat template of the model in dir (or of
// the tokenizer_config.json path given): a
// chat_template.jinja file when present (newer transformers save it apart),
// else tokenizer_config.json's chat_template, a string or a list of
// {name, template}. bos_token, eos_token, pad_token and unk_token from the
// config become Defaults, as transformers passes them to the template.
func FromTokenizerConfig(dir string) (*Template, error) {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir) // a path to tokenizer_config.json itself
	}
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(cfgPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("chattemplate: %w", err)
	}
	var cfg map[string]json.RawMessage
	if data != nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("chattemplate: %s: %w", cfgPath, err)
		}
	}
	var t *Template
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	if src, err := os.ReadFile(jinjaPath); err == nil {
		if t, err = Parse(string(src)); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, jinjaPath)
		}
		t.Source = jinjaPath
	} else if raw, ok := cfg["chat_template"]; ok && string(raw) != "null" {
		if t, err = parseConfigTemplate(raw); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, cfgPath)
		}
		t.Source = cfgPath
	} else {
		return nil, ErrNoTemplate
	}
	t.Defaults = map[string]any{}
	for _, k := range []string{"bos_token", "eos_token", "pad_token", "unk_token"} {
		if s := tokenString(cfg[k]); s != "" {
			t.Defaults[k] = s
		}
	}
	return t, nil
}

func parseConfigTemplate(raw json.RawMessage) (*Template, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return Parse(s)
	}
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("chattemplate: chat_template is neither a string nor a list of {name, template}")
	}
	t := &Template{named: map[string]*jinja.Template{}}
	for _, e := range list {
		if err := t.add(e.Name, e.Template); err != nil {
			return nil, err
		}
	}
	if len(t.named) == 0 {
		return nil, ErrNoTemplate
	}
	return t, nil
}

// tokenString reads "<s>" or {"content": "<s>"}.
func tokenString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// Names lists the named templates (just "default" for a plain string).
func (t *Template) Names() []string { return sortedKeys(t.named) }

// pick chooses a named template as transformers does: "tool_use" when tools
// are given and such a template exists, else "default".
func (t *Template) pick(hasTools bool) (string, *jinja.Template, error) {
	if hasTools {
		if c, ok := t.named["tool_use"]; ok {
			return "tool_use", c, nil
		}
	}
	if c, ok := t.named["default"]; ok {
		return "default", c, nil
	}
	if len(t.named) == 1 {
		for n, c := range t.named {
			return n, c, nil
		}
	}
	return "", nil, fmt.Errorf("chattemplate: no \"default\" template among %s", strings.Join(t.Names(), ", "))
}

// Render produces the prompt text.
func (t *Template) Render(in Input) (string, error) {
	return t.RenderContext(context.Background(), in)
}

// RenderContext produces the prompt text within t.Limits; cancelling ctx
// stops the render at its next loop iteration, macro call or output.
func (t *Template) RenderContext(ctx context.Context, in Input) (out string, err error) {
	name, c, err := t.pick(len(in.Tools) > 0)
	if err != nil {
		return "", err
	}
	label := fmt.Sprintf("chat template %q", name)
	if t.Source != "" {
		label += " of " + t.Source
	}
	g := newGuard(ctx, t.Limits, label)
	defer func() {
		// The engine is not ours; a panic in it is a bad template, not a
		// reason to take the process down.
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("chattemplate: %s crashed the renderer: %v", label, r)
		}
	}()
	data := map[string]jinja.Value{}
	for k, v := range t.Defaults {
		data[k] = toValue(v)
	}
	msgs := make([]jinja.Value, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = messageValue(m)
	}
	data["messages"] = jinja.NewList(msgs)
	if in.Tools != nil {
		data["tools"] = toValue(in.Tools)
	} else {
		data["tools"] = jinja.None()
	}
	data["add_generation_prompt"] = jinja.NewBool(in.AddGenerationPrompt)
	for k, v := range in.Extra {
		data[k] = toValue(v)
	}
	now := t.Now
	if now == nil {
		now = time.Now
	}
	data["strftime_now"] = jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		format := "%Y-%m-%d"
		if len(args) > 0 && args[0].IsString() {
			format = args[0].AsString()
		}
		return jinja.NewString(strftime(now(), format)), nil
	})
	data["raise_exception"] = jinja.NewCallable("raise_exception", raiseException)
	data[tojsonName] = jinja.NewCallable(tojsonName, tojsonFilter)
	g.install(data)
	out, err = c.RenderValues(data)
	if g.err != nil {
		return "", g.err
	}
	if err != nil {
		var te *TemplateError
		if errors.As(err, &te) {
			return "", te
		}
		return "", fmt.Errorf("chattemplate: render %s: %w", label, err)
	}
	return out, nil
}

// TemplateError is an error the template raised itself with
// raise_exception, e.g. "Conversation roles must alternate
// user/assistant/user/assistant/...". Its text is the template's own.
type TemplateError struct{ Message string }

func (e *TemplateError) Error() string { return e.Message }

func raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	msg := "template raised an exception"
	if len(args) > 0 {
		msg = plainString(args[0])
	}
	return jinja.Undefined(), &TemplateError{Message: msg}
}

// plainString is str(v): strings without the quotes Value.String adds.
func plainString(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}
