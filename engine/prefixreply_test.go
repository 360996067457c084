package engine

import (
	"context"
	"slices"
	"testing"

	"hark/mlx/mlxtest"
)

// A chat's next turn repeats the previous prompt and reply and adds the
// user's new message. A batched row leaves both in the prefix trie, so the
// follow-up is reused up to the reply's last token (the one never fed to
// the model), and gives the tokens a cold run of the same prompt gives;
// a row stopped mid-reply leaves what it generated too.
func TestPrefixReusesPreviousReply(t *testing.T) {
	e, err := Load(mlxtest.Assets(t, "models", "stories260K", "hf"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	prompt := randomPrompt(11, PrefixBlock+36, 500) // a whole block and a partial one
	opt := Options{MaxTokens: 40}
	first, err := e.GenerateBatched(ctx, prompt, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.FinishReason != FinishLength || len(first.Tokens) != 40 {
		t.Fatalf("first turn: %s after %d tokens; the test wants a reply cut at 40", first.FinishReason, len(first.Tokens))
	}
	// The reply's blocks replace the prompt's partial leaf: the whole first
	// block, the second (prompt tail and reply), and the rest as a leaf.
	if st := e.PrefixCache(); st.Blocks != 3 {
		t.Errorf("trie after prompt and reply of %d tokens: %+v, want 3 blocks", len(prompt)+39, st)
	}
	follow := slices.Concat(prompt, first.Tokens, []int{33, 201, 7, 90})
	warm, err := e.GenerateBatched(ctx, follow, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(prompt) + len(first.Tokens) - 1; warm.Stats.ReusedTokens != want {
		t.Errorf("follow-up reused %d tokens, want %d (prompt and reply but its last token)", warm.Stats.ReusedTokens, want)
	}
	if warm.Stats.PrefilledTokens != len(follow)-warm.Stats.ReusedTokens {
		t.Errorf("follow-up prefilled %d of %d tokens after reusing %d", warm.Stats.PrefilledTokens, len(follow), warm.Stats.ReusedTokens)
	}
	e.ResetCache()
	cold, err := e.GenerateBatched(ctx, follow, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := e.Generate(ctx, follow, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cold.Stats.ReusedTokens != 0 {
		t.Fatalf("cold run reused %d tokens", cold.Stats.ReusedTokens)
	}
	if !slices.Equal(warm.Tokens, cold.Tokens) || !slices.Equal(warm.Tokens, alone.Tokens) {
		t.Errorf("follow-up tokens\nreusing the reply %v\ncold batched      %v\nalone             %v", warm.Tokens, cold.Tokens, alone.Tokens)
	}
	// A row's stats count its own keys and values: as many as alone
	// (whose storage may have room to spare), whatever was reused.
	if kv := warm.Stats.KVCacheBytes; kv <= 0 || kv != cold.Stats.KVCacheBytes || kv > alone.Stats.KVCacheBytes {
		t.Errorf("KV bytes: %d reusing, %d cold batched, %d alone", kv, cold.Stats.KVCacheBytes, alone.Stats.KVCacheBytes)
	}

	// Stopped after 10 tokens: those are reused too.
	e.ResetCache()
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	sopt := opt
	sopt.OnToken = func(n int) {
		if n == 10 {
			stop()
		}
	}
	part, err := e.GenerateBatched(stopCtx, prompt, sopt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if part.FinishReason != FinishCancelled || len(part.Tokens) < 10 || len(part.Tokens) >= 40 {
		t.Fatalf("stopped reply: %s after %d tokens", part.FinishReason, len(part.Tokens))
	}
	if !slices.Equal(part.Tokens, first.Tokens[:len(part.Tokens)]) {
		t.Fatalf("stopped reply %v is not the start of %v", part.Tokens, first.Tokens)
	}
	again := slices.Concat(prompt, part.Tokens, []int{33, 201})
	res, err := e.GenerateBatched(ctx, again, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(prompt) + len(part.Tokens) - 1; res.Stats.ReusedTokens != want {
		t.Errorf("after a stopped reply of %d tokens, reused %d, want %d", len(part.Tokens), res.Stats.ReusedTokens, want)
	}
}
