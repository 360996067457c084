package chat

import (
	"encoding/json"
	"fmt"
	"strings"

	"hark/library/store"
)

// exportMarkdown renders a conversation as a Markdown document: a title,
// the model and system prompt, then one section per message. Replies keep
// their Markdown as written; a stopped or failed reply says so.
func exportMarkdown(c store.Conversation, msgs []store.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(c.Title))
	if c.Model != "" {
		fmt.Fprintf(&b, "- Model: `%s`\n", c.Model)
	}
	fmt.Fprintf(&b, "- Started: %s\n", c.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if strings.TrimSpace(c.SystemPrompt) != "" {
		b.WriteString("\n## System prompt\n\n")
		b.WriteString(quote(c.SystemPrompt))
	}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			b.WriteString("\n## You\n\n")
		case "assistant":
			b.WriteString("\n## Assistant\n\n")
		default:
			fmt.Fprintf(&b, "\n## %s\n\n", strings.ToUpper(m.Role[:1])+m.Role[1:])
		}
		b.WriteString(strings.TrimRight(m.Content, "\n"))
		b.WriteString("\n")
		var st Stats
		if m.Role == "assistant" && json.Unmarshal(m.Stats, &st) == nil {
			switch {
			case st.Stopped:
				b.WriteString("\n*(stopped)*\n")
			case st.Error != "":
				fmt.Fprintf(&b, "\n*(interrupted: %s)*\n", oneLine(st.Error))
			}
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// quote makes text a Markdown block quote, so a system prompt's own
// headings cannot break the document's structure.
func quote(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}
