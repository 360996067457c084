package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"hark/engine"
	"hark/engine/grammar"
	"hark/models/chattemplate"
)

// genFlags are hark chat's sampling and output controls beyond the basics:
// every setting the engine's Options has.
type genFlags struct {
	topK                            int
	topP, minP                      float64
	repPenalty, presence, frequency float64
	stop                            stringList
	logprobs                        int
	think, noThink                  bool
	toolsFile, schemaFile           string
	jsonObject                      bool
	set                             map[string]bool // flags given on the command line

	tools []any
	// noThoughts: JSON output on a template with a thinking switch and no
	// --think: the document starts at the first token, so no thoughts.
	noThoughts bool
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ", ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (g *genFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.topK, "top-k", 0, "keep the K most likely tokens (0 = all; default: the model's)")
	fs.Float64Var(&g.topP, "top-p", 0, "keep the smallest set of tokens whose probability reaches P (default: the model's)")
	fs.Float64Var(&g.minP, "min-p", 0, "drop tokens less likely than P times the most likely one")
	fs.Float64Var(&g.repPenalty, "repetition-penalty", 0, "penalise tokens seen in the last 64 (>1 discourages repeats)")
	fs.Float64Var(&g.presence, "presence-penalty", 0, "subtract from tokens already generated (OpenAI's presence_penalty)")
	fs.Float64Var(&g.frequency, "frequency-penalty", 0, "subtract per earlier occurrence (OpenAI's frequency_penalty)")
	fs.Var(&g.stop, "stop", "end the reply at this text, which is not shown (repeatable)")
	fs.IntVar(&g.logprobs, "logprobs", -1, "report each token's log probability with N alternatives (0 = the chosen token only); with --json in the result, else on stderr")
	fs.BoolVar(&g.think, "think", false, "let the model think before answering (templates with enable_thinking, e.g. Qwen3)")
	fs.BoolVar(&g.noThink, "no-think", false, "answer without thinking (templates with enable_thinking)")
	fs.StringVar(&g.toolsFile, "tools", "", "JSON file with a list of tool definitions for the chat template")
	fs.StringVar(&g.schemaFile, "json-schema", "", "JSON Schema file: the reply is a JSON document valid against it")
	fs.BoolVar(&g.jsonObject, "json-object", false, "the reply is a JSON object")
}

// check validates the flags once parsed, and reads the tools file.
func (g *genFlags) check(fs *flag.FlagSet) error {
	g.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { g.set[f.Name] = true })
	if g.think && g.noThink {
		return Usagef("--think and --no-think exclude each other")
	}
	if g.schemaFile != "" && g.jsonObject {
		return Usagef("--json-schema and --json-object exclude each other")
	}
	if g.set["logprobs"] && (g.logprobs < 0 || g.logprobs > engine.MaxTopLogprobs) {
		return Usagef("--logprobs %d must be in [0, %d]", g.logprobs, engine.MaxTopLogprobs)
	}
	if g.toolsFile != "" {
		data, err := os.ReadFile(g.toolsFile)
		if err != nil {
			return fmt.Errorf("--tools: %w", err)
		}
		v, err := chattemplate.DecodeJSON(data)
		if err != nil {
			return fmt.Errorf("--tools %s: not JSON: %w", g.toolsFile, err)
		}
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("--tools %s: want a JSON list of tool definitions", g.toolsFile)
		}
		g.tools = list
	}
	return nil
}

// apply sets the given flags on opt (the rest keep the model's defaults).
func (g *genFlags) apply(opt *engine.Options) {
	if g.set["top-k"] {
		opt.TopK = g.topK
	}
	if g.set["top-p"] {
		opt.TopP = g.topP
	}
	if g.set["min-p"] {
		opt.MinP = g.minP
	}
	if g.set["repetition-penalty"] {
		opt.RepetitionPenalty = g.repPenalty
	}
	if g.set["presence-penalty"] {
		opt.PresencePenalty = g.presence
	}
	if g.set["frequency-penalty"] {
		opt.FrequencyPenalty = g.frequency
	}
	opt.Stop = append(opt.Stop, g.stop...)
	if g.set["logprobs"] {
		opt.Logprobs, opt.TopLogprobs = true, g.logprobs
	}
}

// prepare checks what the flags need from the loaded model, and compiles
// the schema once for the session.
func (g *genFlags) prepare(e *engine.Engine, raw bool) (*grammar.Grammar, error) {
	if (g.think || g.noThink) && (raw || !e.SupportsThinking()) {
		return nil, fmt.Errorf("--think/--no-think: this model's chat template has no thinking switch (enable_thinking)")
	}
	if g.tools != nil && (raw || !e.SupportsTools()) {
		return nil, fmt.Errorf("--tools: this model's chat template does not render tools")
	}
	g.noThoughts = (g.schemaFile != "" || g.jsonObject) && !g.think && !g.noThink && !raw && e.SupportsThinking()
	switch {
	case g.schemaFile != "":
		data, err := os.ReadFile(g.schemaFile)
		if err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
		gr, err := grammar.Compile(data, grammar.VocabOf(e))
		if err != nil {
			return nil, fmt.Errorf("--json-schema %s: %w", g.schemaFile, err)
		}
		return gr, nil
	case g.jsonObject:
		return grammar.JSONObject(grammar.VocabOf(e)), nil
	}
	return nil, nil
}

// extra is the template variables the flags set.
func (g *genFlags) extra() map[string]any {
	switch {
	case g.think:
		return map[string]any{"enable_thinking": true}
	case g.noThink, g.noThoughts:
		return map[string]any{"enable_thinking": false}
	}
	return nil
}

// chatPrompt renders a chat turn with the flags' tools and variables.
func (g *genFlags) chatPrompt(ctx context.Context, e *engine.Engine, msgs []chattemplate.Message) ([]int, error) {
	return e.ChatPromptTools(ctx, msgs, g.tools, g.extra())
}

// writeLogprobs prints one line per token: its text, log probability and
// the alternatives.
func writeLogprobs(w io.Writer, lps []engine.TokenLogprob) {
	for _, lp := range lps {
		text, _ := json.Marshal(lp.Text)
		fmt.Fprintf(w, "%s\t%.4f", text, lp.Logprob)
		for _, t := range lp.Top {
			alt, _ := json.Marshal(t.Text)
			fmt.Fprintf(w, "\t%s=%.4f", alt, t.Logprob)
		}
		fmt.Fprintln(w)
	}
}
