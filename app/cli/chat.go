package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hark/engine"
	"hark/engine/grammar"
	"hark/models/chattemplate"
	"hark/models/nn"
)

// chatCommand is hark chat, listed by Commands.
func chatCommand() Command {
	return Command{
		Name:    "chat",
		Usage:   "hark chat --model ID [--system S] [-p PROMPT] [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repetition-penalty R] [--presence-penalty P] [--frequency-penalty F] [--stop S]... [--max-tokens N] [--seed N] [--logprobs N] [--think|--no-think] [--tools FILE] [--json-schema FILE|--json-object] [--kv-bits 32|16|8|4] [--kv-group N] [--draft MODEL|prompt-lookup] [--draft-tokens N] [--raw] [--json]",
		Summary: "chat with a local language model (interactive, or one-shot with -p)",
		Run:     runChat,
	}
}

type chatFlags struct {
	model, system, prompt string
	hasPrompt             bool
	temp                  float64
	maxTokens             int
	seed                  int64
	raw, asJSON           bool
	kvBits, kvGroup       int
	draft                 string
	draftTokens           int
	gen                   genFlags
	grammar               *grammar.Grammar // --json-schema / --json-object
}

func runChat(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "chat")
	var f chatFlags
	fs.StringVar(&f.model, "model", "", "model: a model directory, or a library ID (fingerprint or org/repo)")
	fs.StringVar(&f.system, "system", "", "system prompt")
	fs.StringVar(&f.prompt, "p", "", "one-shot prompt: print the reply and exit (with --raw, \"\" starts from BOS)")
	fs.Float64Var(&f.temp, "temp", -1, "sampling temperature (0 = greedy; default: the model's generation_config)")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "stop after N generated tokens (0 = at end of text or context)")
	fs.Int64Var(&f.seed, "seed", -1, "random seed for reproducible sampling (-1 = random)")
	fs.BoolVar(&f.raw, "raw", false, "prompt the model with plain text, without its chat template")
	fs.BoolVar(&f.asJSON, "json", false, "one-shot: print a JSON result with stats instead of the text")
	fs.IntVar(&f.kvBits, "kv-bits", 0, fmt.Sprintf("keep the KV cache in %v bits (0 = the default, %s; %d = float32; 16 = f16; 8 and 4 quantized: 1.75x / 3x f16's context in the same memory)", nn.KVBitsValues, defaultKVName(), nn.KVFloat32Bits))
	fs.IntVar(&f.kvGroup, "kv-group", 0, "group size of the quantized KV cache: 32, 64 or 128 (default 64)")
	fs.StringVar(&f.draft, "draft", "", "speculative decoding: a smaller draft model with the same tokenizer (directory or library ID), or prompt-lookup")
	fs.IntVar(&f.draftTokens, "draft-tokens", 0, "tokens drafted per round (default: 8 for prompt-lookup, 4 for a draft model)")
	f.gen.register(fs)
	if err := Parse(fs, args); err != nil {
		return err
	}
	if err := f.gen.check(fs); err != nil {
		return err
	}
	fs.Visit(func(fl *flag.Flag) { f.hasPrompt = f.hasPrompt || fl.Name == "p" })
	if f.model == "" {
		return Usagef("--model is required")
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	if f.asJSON && !f.hasPrompt {
		return Usagef("--json needs a one-shot prompt (-p)")
	}
	dir, err := chatModelDir(ctx, f.model)
	if err != nil {
		return err
	}
	start := time.Now()
	e, err := engine.Load(dir, engine.LoadOptions{KV: nn.KVQuant{Bits: f.kvBits, Group: f.kvGroup}})
	if err != nil {
		return err
	}
	defer e.Close()
	loaded := time.Since(start)
	drafter, err := chatDrafter(ctx, e, f.draft)
	if err != nil {
		return err
	}
	if d, ok := drafter.(*engine.DraftModel); ok {
		defer d.Close()
	}
	if e.Template == nil {
		f.raw = true // a base model: plain completion
	}
	if f.grammar, err = f.gen.prepare(e, f.raw); err != nil {
		return err
	}
	opt := engine.Options{Sampling: e.Defaults, MaxTokens: f.maxTokens, Draft: drafter, DraftTokens: f.draftTokens}
	f.gen.apply(&opt)
	if f.temp >= 0 {
		opt.Temperature = f.temp
	}
	if f.seed >= 0 {
		s := uint64(f.seed)
		opt.Seed = &s
	}
	if f.hasPrompt {
		return chatOnce(ctx, env, e, f, opt, loaded)
	}
	return chatREPL(ctx, env, e, f, opt)
}

// chatDrafter turns --draft into a drafter: prompt lookup, or a draft
// model resolved like --model.
func chatDrafter(ctx context.Context, e *engine.Engine, name string) (engine.Drafter, error) {
	switch name {
	case "":
		return nil, nil
	case "prompt-lookup":
		return engine.PromptLookup{}, nil
	}
	dir, err := chatModelDir(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("--draft: %w", err)
	}
	return engine.LoadDraft(e, dir)
}

// chatModelDir accepts a model directory directly, so a path works with
// no library scan; anything else is resolved through the library.
func chatModelDir(ctx context.Context, id string) (string, error) {
	if st, err := os.Stat(filepath.Join(id, "config.json")); err == nil && !st.IsDir() {
		return id, nil
	}
	if st, err := os.Stat(id); err == nil && st.IsDir() && !isLibraryDir(id) {
		return "", fmt.Errorf("%s has no config.json, so it is not a model folder Hark can load (a download that has not finished, or the wrong folder?)", id)
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return "", err
	}
	defer db.Close()
	m, err := lib.Resolve(ctx, id)
	if err != nil {
		return "", err
	}
	if !m.Supported {
		why := m.Reason
		if len(m.Problems) > 0 {
			why = m.Problems[0]
		}
		return "", fmt.Errorf("%s cannot be loaded: %s", m.ID, why)
	}
	return m.Path, nil
}

// isLibraryDir reports whether dir is a repo or snapshot folder of the HF
// cache, which the library resolves (a repo folder has no config.json).
func isLibraryDir(dir string) bool {
	for d := filepath.Clean(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "models--") {
			return true
		}
	}
	return false
}

// prompt builds the token ids for a conversation: through the chat
// template, or as plain text (system prompt first) in raw mode.
func prompt(ctx context.Context, e *engine.Engine, f *chatFlags, msgs []chattemplate.Message, rawText string) ([]int, error) {
	raw, system := f.raw, f.system
	if raw {
		if system != "" {
			rawText = system + "\n\n" + rawText
		}
		return e.RawPrompt(rawText), nil
	}
	if system != "" {
		msgs = append([]chattemplate.Message{{"role": "system", "content": system}}, msgs...)
	}
	return f.gen.chatPrompt(ctx, e, msgs)
}

// loaded is how long engine.Load took: --json reports it, since load time
// is part of what a one-shot user waits for and the stats start after it.
func chatOnce(ctx context.Context, env *Env, e *engine.Engine, f chatFlags, opt engine.Options, loaded time.Duration) error {
	ids, err := prompt(ctx, e, &f, []chattemplate.Message{{"role": "user", "content": f.prompt}}, f.prompt)
	if err != nil {
		return err
	}
	var onText func(string) error
	if !f.asJSON {
		onText = func(s string) error {
			_, err := io.WriteString(env.Stdout, s)
			return err
		}
	}
	if f.grammar != nil {
		opt.Constraint = f.grammar.Start()
	}
	res, err := e.Generate(ctx, ids, opt, onText)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(env.Stdout, struct {
			Model    string        `json:"model"`
			LoadTime time.Duration `json:"load_ns"`
			*engine.Result
		}{e.Dir, loaded, res})
	}
	if isTerminal(env.Stdout) {
		fmt.Fprintln(env.Stdout)
	}
	writeLogprobs(env.Stderr, res.Logprobs)
	return nil
}

func chatREPL(ctx context.Context, env *Env, e *engine.Engine, f chatFlags, opt engine.Options) error {
	mode := "chat"
	if f.raw {
		mode = "raw completion"
	}
	fmt.Fprintf(env.Stderr, "hark chat: %s (%s, %s mode). /reset starts over, /exit or end of input quits.\n", filepath.Base(e.Dir), e.Model.Info().Family, mode)
	in := bufio.NewScanner(env.Stdin)
	in.Buffer(make([]byte, 1<<16), 16<<20)
	var msgs []chattemplate.Message
	var transcript strings.Builder // raw mode: the running document
	for {
		fmt.Fprint(env.Stderr, "> ")
		if !in.Scan() {
			fmt.Fprintln(env.Stderr)
			return in.Err()
		}
		line := in.Text()
		switch strings.TrimSpace(line) {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/reset":
			msgs, transcript = nil, strings.Builder{}
			e.ResetCache()
			continue
		}
		msgs = append(msgs, chattemplate.Message{"role": "user", "content": line})
		transcript.WriteString(line)
		ids, err := prompt(ctx, e, &f, msgs, transcript.String())
		if err != nil {
			return err
		}
		if f.grammar != nil {
			opt.Constraint = f.grammar.Start()
		}
		res, err := e.Generate(ctx, ids, opt, func(s string) error {
			_, err := io.WriteString(env.Stdout, s)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout)
		writeLogprobs(env.Stderr, res.Logprobs)
		st := res.Stats
		spec := ""
		if st.Drafted > 0 {
			spec = fmt.Sprintf("; drafted %d, accepted %d (%.0f%%)", st.Drafted, st.Accepted, 100*st.AcceptanceRate)
		}
		fmt.Fprintf(env.Stderr, "[%d tokens, %.1f tok/s; prompt %d (%d reused), %.0f tok/s; first token %s%s]\n",
			st.GeneratedTokens, st.GenerationTPS, st.PromptTokens, st.ReusedTokens, st.PromptTPS, st.TimeToFirstToken.Round(1e6), spec)
		msgs = append(msgs, chattemplate.Message{"role": "assistant", "content": res.Text})
		transcript.WriteString(res.Text)
		if res.FinishReason == engine.FinishCancelled || ctx.Err() != nil {
			// Ctrl-C cancels the process context: end the session quietly.
			fmt.Fprintln(env.Stderr, "(interrupted)")
			return nil
		}
	}
}

// defaultKVName names the engine's default KV cache (engine.DefaultKV)
// for the flags' help.
func defaultKVName() string {
	switch q := engine.DefaultKV; {
	case q == (nn.KVQuant{}):
		return "float32"
	case q.Bits == nn.KVHalfBits:
		return "f16"
	default:
		return fmt.Sprintf("%d-bit", q.Bits)
	}
}
