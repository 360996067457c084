package engine

import (
	"context"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/chattemplate"
	"hark/models/llm/llmtest"
)

// A tiny Qwen3 with the real Qwen3 tokenizer and chat template: prompts go
// through the template, and the template's end-of-turn token ends replies.
func TestChatPromptAndTemplateEOS(t *testing.T) {
	mlxtest.NoLeaks(t)
	tokDir := mlxtest.Assets(t, "tokenizers", "qwen3")
	dir := t.TempDir()
	shape := llmtest.Tiny
	shape.Vocab = 151936
	if err := llmtest.Llama(shape, "qwen3", true).Write(dir, 3, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
		t.Fatal(err)
	}
	linkFiles(t, tokDir, dir, "tokenizer.json", "tokenizer_config.json")
	e, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Template == nil {
		t.Fatal("chat template not loaded")
	}
	imEnd, ok := e.Tokenizer.TokenID("<|im_end|>")
	if !ok || !e.isEOS(imEnd) || !e.isEOS(2) {
		t.Fatalf("EOS %v lacks <|im_end|> (%d) or config's 2", e.EOS, imEnd)
	}
	ids, err := e.ChatPrompt(context.Background(), []chattemplate.Message{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := e.Tokenizer.Decode(ids, false)
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
	if !strings.HasPrefix(text, want) {
		t.Fatalf("prompt %q, want it to start with %q", text, want)
	}
	// Forcing <|im_end|> makes it the first sampled token: an empty reply
	// that stops, with nothing shown.
	opt := Options{MaxTokens: 5, Sampling: Sampling{LogitBias: map[int]float64{imEnd: 1e4}}}
	shown := ""
	res, err := e.Generate(context.Background(), ids, opt, func(s string) error { shown += s; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != FinishStop || len(res.Tokens) != 0 || res.Text != "" || shown != "" {
		t.Fatalf("finish %q tokens %v text %q", res.FinishReason, res.Tokens, res.Text)
	}
}
