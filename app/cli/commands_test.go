package cli

import (
	"sort"
	"testing"
)

// Commands is the one list of subcommands: names unique and sorted (hark
// help lists them in this order), and each has what help and dispatch use.
func TestCommandsList(t *testing.T) {
	cmds := Commands()
	var names []string
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c.Name] {
			t.Errorf("command %q listed twice", c.Name)
		}
		seen[c.Name] = true
		names = append(names, c.Name)
		if c.Usage == "" || c.Summary == "" || c.Run == nil {
			t.Errorf("command %q lacks a usage, summary or Run", c.Name)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("commands not in name order: %v", names)
	}
	for _, want := range []string{"audio", "chat", "doctor", "models", "serve", "template", "tokenize", "transcribe", "version"} {
		if !seen[want] {
			t.Errorf("command %q missing", want)
		}
	}
}
