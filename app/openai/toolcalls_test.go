package openai

import (
	"strings"
	"testing"
)

// Stored replies are read as the API reads them: Qwen3 blocks after text
// and thoughts, Llama 3 JSON, nothing in plain text or in thoughts, and a
// broken call is an error naming it.
func TestReplyToolCalls(t *testing.T) {
	for _, c := range []struct {
		text, before string
		calls        []ToolCall
		err          string
	}{
		{text: "plain answer", before: "plain answer"},
		{text: "<think>\nmaybe <tool_call>{\"name\":\"x\"}</tool_call>\n</think>\n\nno call", before: "<think>\nmaybe <tool_call>{\"name\":\"x\"}</tool_call>\n</think>\n\nno call"},
		{
			text:   "<think>\nweather\n</think>\n\nLet me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
			before: "<think>\nweather\n</think>\n\nLet me look.",
			calls:  []ToolCall{{"get_weather", `{"city": "Paris"}`}, {"get_time", "{}"}},
		},
		{text: "thought\n</think>\n<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1}}</tool_call>", before: "thought\n</think>", calls: []ToolCall{{"f", `{"a":1}`}}},
		{text: `{"name": "get_weather", "parameters": {"city": "Oslo"}}`, before: "", calls: []ToolCall{{"get_weather", `{"city": "Oslo"}`}}},
		{text: "<tool_call>{not json}</tool_call>", err: "not valid JSON with a name"},
	} {
		before, calls, err := ReplyToolCalls(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil || before != c.before || len(calls) != len(c.calls) {
			t.Errorf("%q: before %q calls %v err %v", c.text, before, calls, err)
			continue
		}
		for i := range calls {
			if calls[i] != c.calls[i] {
				t.Errorf("%q: call %d is %+v, want %+v", c.text, i, calls[i], c.calls[i])
			}
		}
	}
}
