package chat

import (
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestChatControlsRefusedAtSave(t *testing.T) {
	cases := map[string]Sampling{
		"unsupported keyword format": {JSON: "schema", JSONSchema: `{"type":"string","format":"email"}`},
		"needs a schema":             {JSON: "schema"},
		`JSON output "yaml"`:         {JSON: "yaml"},
		"tools: want a JSON list":    {Tools: `{"name":"x"}`},
		"a stop string is empty":     {Stop: []string{""}},
		"alternatives must be":       {Logprobs: ptr(99)},
	}
	for want, c := range cases {
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", c, err, want)
		}
	}
}
