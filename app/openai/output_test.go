package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

// Qwen3 writes reasoning in <think> and calls as Hermes-style blocks (the
// format its chat template documents to the model).
const qwenReply = "<think>\nThe user wants weather; call the tool.\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"CET\"}}\n</tool_call>"

func TestSplitQwen3ReasoningAndToolCalls(t *testing.T) {
	p := splitter{tools: true}.split(qwenReply, true)
	if p.reasoning != "The user wants weather; call the tool." || p.content != "Let me check." {
		t.Fatalf("reasoning %q content %q", p.reasoning, p.content)
	}
	calls, err := parseToolCalls(p.toolText)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %+v, %v", calls, err)
	}
	if calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city": "Paris"}` || calls[0].Type != "function" || !strings.HasPrefix(calls[0].ID, "call_") {
		t.Errorf("first call %+v", calls[0])
	}
	if calls[1].Function.Name != "get_time" || calls[0].ID == calls[1].ID {
		t.Errorf("second call %+v", calls[1])
	}
}

// Llama 3.1/3.2 write a call as a bare JSON object with "parameters".
func TestLlama3ToolCall(t *testing.T) {
	for _, reply := range []string{
		`{"name": "get_weather", "parameters": {"city": "Paris"}}`,
		"<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
	} {
		p := splitter{tools: true}.split(reply, true)
		if p.content != "" {
			t.Fatalf("%q: content %q", reply, p.content)
		}
		calls, err := parseToolCalls(p.toolText)
		if err != nil || len(calls) != 1 || calls[0].Function.Name != "get_weather" {
			t.Fatalf("%q: %+v %v", reply, calls, err)
		}
		var args map[string]string
		if json.Unmarshal([]byte(calls[0].Function.Arguments), &args) != nil || args["city"] != "Paris" {
			t.Fatalf("arguments %q", calls[0].Function.Arguments)
		}
	}
	// JSON that is not a call stays content; without tools nothing is a call.
	if p := (splitter{tools: true}).split(`{"answer": 42}`, true); p.content != `{"answer": 42}` || p.toolText != "" {
		t.Fatalf("plain JSON: %+v", p)
	}
	if p := (splitter{}).split(qwenReply, true); p.toolText != "" || !strings.Contains(p.content, "<tool_call>") {
		t.Fatalf("no tools offered: %+v", p)
	}
}

func TestBrokenToolCallIsAnError(t *testing.T) {
	if _, err := parseToolCalls("<tool_call>\n{\"name\": \"f\", \"arguments\": {oops}\n</tool_call>"); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("got %v", err)
	}
}

// Streaming: what is released never changes, no marker leaks in part, and
// the pieces add up to the final split.
func TestSplitStreamsMonotonically(t *testing.T) {
	for _, sp := range []splitter{{tools: true}, {}, {thinking: true, tools: true}} {
		reply := qwenReply
		if sp.thinking {
			reply = strings.TrimPrefix(reply, "<think>")
		}
		var last parts
		for i := 0; i <= len(reply); i++ {
			p := sp.split(reply[:i], false)
			if !strings.HasPrefix(p.reasoning, last.reasoning) || !strings.HasPrefix(p.content, last.content) {
				t.Fatalf("%+v at %d: %q/%q after %q/%q", sp, i, p.reasoning, p.content, last.reasoning, last.content)
			}
			for _, m := range []string{"<", "<tool", "<tool_call"} {
				if sp.tools && strings.HasSuffix(p.content, m) {
					t.Fatalf("%+v at %d: content %q ends with part of a marker", sp, i, p.content)
				}
			}
			last = p
		}
		final := sp.split(reply, true)
		if !strings.HasPrefix(final.content, strings.TrimRight(last.content, " \n")) || final.reasoning != strings.TrimSpace(last.reasoning) {
			t.Fatalf("%+v: streamed %+v, final %+v", sp, last, final)
		}
	}
}

// Model output is untrusted text: splitting and tool-call parsing never
// panic, streamed pieces never shrink, and a parsed call is well formed.
func FuzzSplitOutput(f *testing.F) {
	for _, s := range []string{qwenReply, `{"name": "f", "parameters": {}}`, "<think>a</think>b", "<tool_call>{", "<|python_tag|>{\"name\":\"x\"};{\"name\":\"y\"}", "plain <to", ""} {
		f.Add(s, true, false)
	}
	f.Fuzz(func(t *testing.T, text string, tools, thinking bool) {
		sp := splitter{tools: tools, thinking: thinking}
		var last parts
		for i := 0; i <= len(text); i += 1 + i/8 {
			p := sp.split(text[:i], false)
			if !strings.HasPrefix(p.reasoning, last.reasoning) || !strings.HasPrefix(p.content, last.content) {
				t.Fatalf("pieces shrank at %d: %+v after %+v", i, p, last)
			}
			last = p
		}
		final := sp.split(text, true)
		if final.toolText != "" {
			calls, err := parseToolCalls(final.toolText)
			for _, c := range calls {
				if c.Function.Name == "" || c.Type != "function" || c.ID == "" {
					t.Fatalf("malformed call %+v (err %v)", c, err)
				}
			}
		}
	})
}
