package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"hark/models/chattemplate"
)

// templateCommand is hark template, listed by Commands.
func templateCommand() Command {
	return Command{
		Name:    "template",
		Usage:   "hark template --tokenizer DIR < request.json",
		Summary: "render a model's chat template for {\"messages\",\"tools\",\"add_generation_prompt\",\"extra\"}",
		Run:     runTemplate,
	}
}

// templateRequest is the stdin document. Messages and tools decode with
// their key order kept, since templates print tool schemas with tojson.
type templateRequest struct {
	Messages            []chattemplate.Message `json:"messages"`
	Tools               json.RawMessage        `json:"tools"`
	AddGenerationPrompt bool                   `json:"add_generation_prompt"`
	Extra               *chattemplate.Object   `json:"extra"`
}

func runTemplate(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "template")
	dir := fs.String("tokenizer", "", "model directory with tokenizer_config.json (chat_template)")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return Usagef("--tokenizer is required")
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	tpl, err := chattemplate.FromTokenizerConfig(*dir)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(env.Stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	var req templateRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("stdin: want {\"messages\": [...], ...}: %w", err)
	}
	in := chattemplate.Input{Messages: req.Messages, AddGenerationPrompt: req.AddGenerationPrompt, Extra: map[string]any{}}
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		v, err := chattemplate.DecodeJSON(req.Tools)
		if err != nil {
			return fmt.Errorf("stdin: tools: %w", err)
		}
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("stdin: tools must be a list")
		}
		in.Tools = list
	}
	if req.Extra != nil {
		for _, k := range req.Extra.Keys() {
			in.Extra[k], _ = req.Extra.Get(k)
		}
	}
	out, err := tpl.RenderContext(ctx, in)
	if err != nil {
		return err
	}
	_, err = io.WriteString(env.Stdout, out)
	return err
}
