package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"hark/models/tokenizer"
)

// tokenizeCommand is hark tokenize, listed by Commands.
func tokenizeCommand() Command {
	return Command{
		Name:    "tokenize",
		Usage:   "hark tokenize --tokenizer DIR|FILE [--decode] [--special] < lines.jsonl",
		Summary: "encode {\"text\"} JSON lines to {\"ids\"} (or decode with --decode)",
		Run:     runTokenize,
	}
}

func runTokenize(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "tokenize")
	path := fs.String("tokenizer", "", "model directory with tokenizer.json, or the tokenizer.json file")
	decode := fs.Bool("decode", false, "read {\"ids\":[...]} lines and write {\"text\":...}")
	special := fs.Bool("special", false, "encode: add special tokens (BOS...); decode: keep special tokens")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if *path == "" {
		return Usagef("--tokenizer is required")
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	tok, err := tokenizer.Load(*path)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(env.Stdin)
	in.Buffer(make([]byte, 1<<16), maxTokenizeLine+1) // a line may hold a whole document
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // keep "<|im_end|>" readable
	for line := 1; in.Scan(); line++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(in.Bytes()) == 0 {
			continue
		}
		if *decode {
			var req struct {
				IDs *[]int `json:"ids"`
			}
			if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.IDs == nil {
				return fmt.Errorf("stdin line %d: want {\"ids\": [...]}: %v", line, errOrMissing(err, "ids"))
			}
			for _, id := range *req.IDs {
				if tok.Token(id) == "" {
					return fmt.Errorf("stdin line %d: id %d is not in the tokenizer's vocabulary (ids run from 0 to %d)", line, id, tok.VocabSize()-1)
				}
			}
			// Special tokens are kept with --special, hidden otherwise.
			err = enc.Encode(map[string]string{"text": tok.Decode(*req.IDs, !*special)})
		} else {
			var req struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Text == nil {
				return fmt.Errorf("stdin line %d: want {\"text\": \"...\"}: %v", line, errOrMissing(err, "text"))
			}
			ids, err := tok.EncodeContext(ctx, *req.Text, *special)
			if err != nil {
				return err
			}
			if ids == nil {
				ids = []int{}
			}
			err = enc.Encode(map[string][]int{"ids": ids})
		}
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if err := in.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("read stdin: a line is longer than %d MB, the most hark tokenize takes in one line (the tokenizer's memory grows with it); split the text into several lines", maxTokenizeLine>>20)
	} else if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

// maxTokenizeLine bounds one input line. Tokenizing takes tens of bytes of
// memory per input byte (one word may be a whole line), so a 48 MB line
// once ran the process out of memory; 16 MB also bounds a chat prompt
// (chattemplate's output limit).
const maxTokenizeLine = 16 << 20

func errOrMissing(err error, key string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("missing %q", key)
}
