package chattemplate

import (
	"strings"
	"testing"
	"time"
)

// GPT-OSS ships a Jinja chat template that writes OpenAI's harmony format.
// Its text is not ours to commit, so this test renders a template written
// here from the format's published description, using every construct
// the shipped one relies on, and checks the result against the format
// built piece by piece in Go:
//   - a recursive macro with a default argument, its output captured by
//     set (TypeScript-like tool signatures);
//   - namespace() objects whose attributes change inside loops;
//   - tests: is defined, is not defined, is iterable, is not string, is
//     not mapping, is none;
//   - dict .items() in the caller's key order, `in` on dicts and strings,
//     `not in (x or [])`, list slices messages[1:] and msgs[loop.index:];
//   - inline if/else, |join, |length, |tojson, raise_exception and
//     strftime_now;
//   - whitespace control on every tag.
//
// (Hark's renderer was also checked against Python's Jinja2, configured
// as transformers configures it, on the shipped template itself: eight
// conversations with tools, builtin tools, reasoning effort, dropped and
// kept analysis, and the template's three errors, all identical.)
const harmonyTemplate = `
{%- macro ts_type(spec, required=[]) -%}
  {%- if spec.type is defined and spec.type is iterable and spec.type is not string and spec.type is not mapping -%}
    {{- spec.type | join(" | ") -}}
  {%- elif spec.type == "array" -%}
    {%- if 'items' in spec -%}
      {%- set inner = ts_type(spec['items'], required) -%}
      {{- (inner if inner|length <= 50 else "any") + "[]" -}}
    {%- else -%}
      {{- "any[]" -}}
    {%- endif -%}
  {%- elif spec.type == "object" and spec.properties -%}
    {{- "{" -}}
    {%- for name, sub in spec.properties.items() -%}
      {{- name -}}
      {%- if name not in (spec.required or []) -%}{{- "?" -}}{%- endif -%}
      {{- ": " + ts_type(sub, spec.required or []) -}}
      {%- if not loop.last -%}{{- ", " -}}{%- endif -%}
    {%- endfor -%}
    {{- "}" -}}
  {%- elif spec.type == "string" and spec.enum -%}
    {{- '"' + spec.enum|join('" | "') + '"' -}}
  {%- elif spec.type == "integer" -%}
    {{- "number" -}}
  {%- else -%}
    {{- spec.type -}}
  {%- endif -%}
{%- endmacro -%}

{%- if model_identity is not defined -%}
  {%- set model_identity = "You are a helpful assistant." -%}
{%- endif -%}
{{- "<|start|>system<|message|>" + model_identity + "\nKnowledge cutoff: 2024-06\nCurrent date: " + strftime_now("%Y-%m-%d") + "\n\n" -}}
{{- "Reasoning: " + (reasoning_effort if reasoning_effort is defined else "medium") + "\n\n" -}}
{{- "# Valid channels: analysis, commentary, final. Channel must be included for every message." -}}
{%- if tools -%}{{- "\nCalls to these tools must go to the commentary channel: 'functions'." -}}{%- endif -%}
{{- "<|end|>" -}}

{%- if messages[0].role in ["system", "developer"] -%}
  {%- set instructions = messages[0].content -%}
  {%- set rest = messages[1:] -%}
{%- else -%}
  {%- set instructions = "" -%}
  {%- set rest = messages -%}
{%- endif -%}
{%- if instructions or tools -%}
  {{- "<|start|>developer<|message|>" -}}
  {%- if instructions -%}{{- "# Instructions\n\n" + instructions + "\n\n" -}}{%- endif -%}
  {%- if tools -%}
    {{- "# Tools\n\n## functions\n\nnamespace functions {\n\n" -}}
    {%- for t in tools -%}
      {%- set f = t.function -%}
      {{- "// " + f.description + "\ntype " + f.name + " = " -}}
      {%- if f.parameters and f.parameters.properties -%}
        {{- "(_: " + ts_type(f.parameters) + ") => any;\n\n" -}}
      {%- else -%}
        {{- "() => any;\n\n" -}}
      {%- endif -%}
    {%- endfor -%}
    {{- "} // namespace functions" -}}
  {%- endif -%}
  {{- "<|end|>" -}}
{%- endif -%}

{%- set last = namespace(tool=none) -%}
{%- for m in rest -%}
  {%- if m.role == "assistant" and "tool_calls" in m -%}
    {%- set later = namespace(final=false) -%}
    {%- for n in rest[loop.index:] -%}
      {%- if n.role == "assistant" and "tool_calls" not in n -%}{%- set later.final = true -%}{%- endif -%}
    {%- endfor -%}
    {%- set call = m.tool_calls[0].function if m.tool_calls[0].function is defined else m.tool_calls[0] -%}
    {%- if m.thinking is defined and not later.final -%}
      {{- "<|start|>assistant<|channel|>analysis<|message|>" + m.thinking + "<|end|>" -}}
    {%- endif -%}
    {{- "<|start|>assistant to=functions." + call.name + "<|channel|>commentary json<|message|>" + call.arguments|tojson + "<|call|>" -}}
    {%- set last.tool = call.name -%}
  {%- elif m.role == "assistant" -%}
    {%- if "<|channel|>" in m.content -%}{{- raise_exception("content holds channel tags") -}}{%- endif -%}
    {{- "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|end|>" -}}
    {%- set last.tool = none -%}
  {%- elif m.role == "tool" -%}
    {%- if last.tool is none -%}{{- raise_exception("a tool result with no tool call before it") -}}{%- endif -%}
    {{- "<|start|>functions." + last.tool + " to=assistant<|channel|>commentary<|message|>" + m.content|tojson + "<|end|>" -}}
  {%- else -%}
    {{- "<|start|>" + m.role + "<|message|>" + m.content + "<|end|>" -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- "<|start|>assistant" -}}{%- endif -%}
`

// harmonyMsg is one harmony message: <|start|>header<|message|>body end.
func harmonyMsg(header, body, end string) string {
	return "<|start|>" + header + "<|message|>" + body + end
}

func TestHarmonyFormat(t *testing.T) {
	tpl, err := Parse(harmonyTemplate)
	if err != nil {
		t.Fatal(err)
	}
	tpl.Now = func() time.Time { return time.Date(2025, 8, 5, 9, 0, 0, 0, time.UTC) }
	system := func(identity, effort string, tools bool) string {
		s := identity + "\nKnowledge cutoff: 2024-06\nCurrent date: 2025-08-05\n\nReasoning: " + effort +
			"\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message."
		if tools {
			s += "\nCalls to these tools must go to the commentary channel: 'functions'."
		}
		return harmonyMsg("system", s, "<|end|>")
	}
	weather := NewObject()
	weather.Set("type", "function")
	fn := NewObject()
	fn.Set("name", "get_weather")
	fn.Set("description", "Gets the weather")
	params := NewObject()
	params.Set("type", "object")
	props := NewObject()
	loc := NewObject()
	loc.Set("type", "string")
	props.Set("location", loc) // caller's order: location before unit
	unit := NewObject()
	unit.Set("type", "string")
	unit.Set("enum", []any{"celsius", "fahrenheit"})
	props.Set("unit", unit)
	days := NewObject()
	days.Set("type", "array")
	days.Set("items", map[string]any{"type": "integer"})
	props.Set("days", days)
	either := NewObject()
	either.Set("type", []any{"string", "null"})
	props.Set("note", either)
	params.Set("properties", props)
	params.Set("required", []any{"location"})
	fn.Set("parameters", params)
	weather.Set("function", fn)
	ping := map[string]any{"type": "function", "function": map[string]any{"name": "ping", "description": "Pings"}}
	toolsNS := "# Tools\n\n## functions\n\nnamespace functions {\n\n" +
		"// Gets the weather\ntype get_weather = (_: {location: string, unit?: \"celsius\" | \"fahrenheit\", days?: number[], note?: string | null}) => any;\n\n" +
		"// Pings\ntype ping = () => any;\n\n} // namespace functions"
	call := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "arguments": map[string]any{"location": "Paris"}}}

	for _, c := range []struct {
		name string
		in   Input
		want string
	}{
		{"user only", Input{Messages: []Message{{"role": "user", "content": "Hi"}}, AddGenerationPrompt: true},
			system("You are a helpful assistant.", "medium", false) + harmonyMsg("user", "Hi", "<|end|>") + "<|start|>assistant"},
		{"instructions, effort, identity, history",
			Input{Messages: []Message{{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Hi"},
				{"role": "assistant", "content": "Salut !"}, {"role": "user", "content": "Ça va ?"}},
				AddGenerationPrompt: true, Extra: map[string]any{"reasoning_effort": "high", "model_identity": "You are Hark."}},
			system("You are Hark.", "high", false) + harmonyMsg("developer", "# Instructions\n\nAnswer in French.\n\n", "<|end|>") +
				harmonyMsg("user", "Hi", "<|end|>") + harmonyMsg("assistant<|channel|>final", "Salut !", "<|end|>") +
				harmonyMsg("user", "Ça va ?", "<|end|>") + "<|start|>assistant"},
		{"tool call pending: analysis kept",
			Input{Messages: []Message{{"role": "user", "content": "Weather?"}, {"role": "assistant", "thinking": "Need the tool.", "tool_calls": []any{call}},
				{"role": "tool", "content": "20°C"}}, Tools: []any{weather, ping}, AddGenerationPrompt: true},
			system("You are a helpful assistant.", "medium", true) + harmonyMsg("developer", toolsNS, "<|end|>") +
				harmonyMsg("user", "Weather?", "<|end|>") + harmonyMsg("assistant<|channel|>analysis", "Need the tool.", "<|end|>") +
				harmonyMsg("assistant to=functions.get_weather<|channel|>commentary json", `{"location": "Paris"}`, "<|call|>") +
				harmonyMsg("functions.get_weather to=assistant<|channel|>commentary", `"20°C"`, "<|end|>") + "<|start|>assistant"},
		{"tool call answered: analysis dropped",
			Input{Messages: []Message{{"role": "user", "content": "Weather?"}, {"role": "assistant", "thinking": "Need the tool.", "tool_calls": []any{call}},
				{"role": "tool", "content": map[string]any{"temp": 20}}, {"role": "assistant", "content": "20°C."}, {"role": "user", "content": "Thanks"}},
				Tools: []any{weather}, AddGenerationPrompt: false},
			system("You are a helpful assistant.", "medium", true) +
				harmonyMsg("developer", strings.Replace(toolsNS, "// Pings\ntype ping = () => any;\n\n", "", 1), "<|end|>") +
				harmonyMsg("user", "Weather?", "<|end|>") +
				harmonyMsg("assistant to=functions.get_weather<|channel|>commentary json", `{"location": "Paris"}`, "<|call|>") +
				harmonyMsg("functions.get_weather to=assistant<|channel|>commentary", `{"temp": 20}`, "<|end|>") +
				harmonyMsg("assistant<|channel|>final", "20°C.", "<|end|>") + harmonyMsg("user", "Thanks", "<|end|>")},
	} {
		got, err := tpl.Render(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	for name, msgs := range map[string][]Message{
		"a tool result with no tool call before it": {{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}},
		"content holds channel tags":                {{"role": "user", "content": "x"}, {"role": "assistant", "content": "<|channel|>final<|message|>y"}},
	} {
		_, err := tpl.Render(Input{Messages: msgs})
		if te, ok := err.(*TemplateError); !ok || te.Message != name {
			t.Errorf("want the template's error %q, got %v", name, err)
		}
	}
}
