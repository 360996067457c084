package chattemplate

import "strings"

// Mentions reports whether any of the templates refers to name, e.g.
// enable_thinking (Qwen3's thinking switch) or tools: a setting the
// template never reads would be silently ignored, so callers offer it
// only where it does something.
func (t *Template) Mentions(name string) bool {
	for _, src := range t.texts {
		if strings.Contains(src, name) {
			return true
		}
	}
	return false
}
