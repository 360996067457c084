package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"hark/app/fit"
	"hark/app/runner"
	"hark/engine"
	"hark/library/store"
	"hark/mlx/mlxtest"
	"hark/models/nn"
)

// The fit verdict is computed for the KV cache and context chosen, from
// the figure the runner checks before loading: on a machine with room for
// stories260K with a 4-bit cache but not a float32 one, the chat picker
// says so per setting, a conversation that keeps 4 bits gets its reply
// and one that keeps float32 is refused as the picker said; the Library's
// rows follow Settings' KV cache and context length, and a new chat keeps
// Settings' KV cache (float32 too, when chosen as 32; unset, the
// engine's default, engine.DefaultKV).
func TestFitFollowsTheChosenKVAndContext(t *testing.T) {
	mlxtest.NoLeaks(t)
	a, _, cm := storiesChat(t)
	s := a.Service
	q4 := nn.KVQuant{Bits: 4, Group: 32} // the model's heads are 8 wide
	admit := func(q nn.KVQuant, context int) int64 {
		t.Helper()
		e, err := engine.Estimate(cm.Path, engine.EstimateOptions{KV: q, Context: context})
		if err != nil {
			t.Fatal(err)
		}
		return runner.Admission(runner.Chat, e)
	}
	f32 := nn.KVQuant{Bits: nn.KVFloat32Bits}
	small, full := admit(q4, 0), admit(f32, 0)
	budget := (small + full) / 2
	setBudget(a, budget)

	// The picker's verdict per KV setting.
	ms, err := s.ListChatModels()
	if err != nil {
		t.Fatal(err)
	}
	verdict := map[nn.KVQuant]fit.KVFit{}
	for _, m := range ms {
		if m.ID == cm.ID {
			for _, f := range m.Fits {
				verdict[nn.KVQuant{Bits: f.KVBits, Group: f.KVGroup}] = f
			}
		}
	}
	if f := verdict[f32]; f.Fit != "too_big" || f.MemoryNeeded != full {
		t.Errorf("float32 cache: %+v, want too_big at %d", f, full)
	}
	// A conversation that states no cache keeps the engine's default.
	defKV := engine.DefaultKV
	if defKV == (nn.KVQuant{}) {
		defKV = f32
	}
	def := verdict[defKV]
	if f := verdict[nn.KVQuant{}]; def.Fit == "" || f != (fit.KVFit{Fit: def.Fit, MemoryNeeded: def.MemoryNeeded}) {
		t.Errorf("default cache: %+v, want the engine default's (%+v) %+v", f, engine.DefaultKV, def)
	}
	if f := verdict[q4]; f.Fit == "too_big" || f.Fit == "" || f.MemoryNeeded != small {
		t.Errorf("4-bit cache: %+v, want it to fit at %d", f, small)
	}
	// The f16 cache (from the engine's list, without groups) lies between.
	if f := verdict[nn.KVQuant{Bits: nn.KVHalfBits}]; f.Fit == "" || f.MemoryNeeded <= small || f.MemoryNeeded >= full {
		t.Errorf("16-bit cache: %+v, want a verdict between %d and %d", f, small, full)
	}
	if f, ok := verdict[nn.KVQuant{Bits: nn.KVHalfBits, Group: 32}]; ok {
		t.Errorf("a verdict for an f16 cache in groups: %+v", f)
	}

	// The runner agrees: the 4-bit conversation is answered, the float32
	// one refused before anything is written.
	events := subscribeChat(t, a)
	reply := func(sm ChatSampling) ChatEvent {
		t.Helper()
		c, err := s.CreateConversation(NewConversation{Model: cm.ID, Sampling: sm})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SendMessage(c.ID, SendRequest{Text: "Once upon a time"}); err != nil {
			t.Fatal(err)
		}
		return last(events.reply(c.ID, nil))
	}
	if ev := reply(ChatSampling{MaxTokens: ptr(8), KVBits: ptr(4), KVGroup: ptr(32)}); ev.Type != "done" || ev.Message == nil || ev.Message.Content == "" {
		t.Fatalf("4-bit conversation the picker says fits: %+v", ev)
	}
	if ev := reply(ChatSampling{MaxTokens: ptr(8), KVBits: ptr(nn.KVFloat32Bits)}); ev.Type != "error" || !strings.Contains(ev.Error, "cannot load") {
		t.Fatalf("float32 conversation the picker says is too big: %+v", ev)
	}

	// Library rows: Settings' KV cache and context length.
	row := func() (string, int64) {
		t.Helper()
		ms, err := s.ListModels()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.ID == cm.ID {
				d, err := s.GetModel(m.ID)
				if err != nil || d.Fit != m.Fit || d.MemoryNeeded != m.MemoryNeeded {
					t.Fatalf("details %+v (%v) disagree with the row %s %d", d.Model, err, m.Fit, m.MemoryNeeded)
				}
				return m.Fit, m.MemoryNeeded
			}
		}
		t.Fatalf("%s not listed", cm.ID)
		return "", 0
	}
	if fit, need := row(); fit != def.Fit || need != def.MemoryNeeded {
		t.Errorf("default settings (the engine's default cache, %+v): %s %d, want %s %d", engine.DefaultKV, fit, need, def.Fit, def.MemoryNeeded)
	}
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = nn.KVFloat32Bits })
	if fit, need := row(); fit != "too_big" || need != full {
		t.Errorf("Settings' float32 cache: %s %d, want too_big %d", fit, need, full)
	}
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = 4 })
	want4 := admit(nn.KVQuant{Bits: 4}, 0)
	if fit, need := row(); fit == "too_big" || need != want4 {
		t.Errorf("Settings' 4-bit cache: %s %d, want it to fit at %d", fit, need, want4)
	}
	saveSettings(t, a, func(st *store.Settings) { st.KVBits, st.ContextTokens = 0, 256 })
	if fit, need := row(); need != admit(nn.KVQuant{}, 256) || need >= full || fit != string(engine.Verdict(need, budget)) {
		t.Errorf("Settings' 256-token context: %s %d, want %d", fit, need, admit(nn.KVQuant{}, 256))
	}

	// A new chat keeps Settings' KV cache unless it chooses its own.
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = 8 })
	c, err := s.CreateConversation(NewConversation{Model: cm.ID})
	if err != nil {
		t.Fatal(err)
	}
	if sm := samplingOf(c); sm.KVBits == nil || *sm.KVBits != 8 {
		t.Errorf("new chat's KV cache: %+v, want Settings' 8 bits", sm)
	}
	c, err = s.CreateConversation(NewConversation{Model: cm.ID, Sampling: ChatSampling{KVBits: ptr(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if sm := samplingOf(c); sm.KVBits == nil || *sm.KVBits != 0 {
		t.Errorf("a chat that chose the default: %+v", sm)
	}
	// A float32 choice in Settings stays float32, through the store, for
	// new chats; an unset one leaves them the engine's default.
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = nn.KVFloat32Bits })
	if st, err := s.GetSettings(); err != nil || st.KVBits != nn.KVFloat32Bits {
		t.Errorf("saved float32 reads back as %d (%v)", st.KVBits, err)
	}
	if c, err = s.CreateConversation(NewConversation{Model: cm.ID}); err != nil {
		t.Fatal(err)
	}
	if sm := samplingOf(c); sm.KVBits == nil || *sm.KVBits != nn.KVFloat32Bits {
		t.Errorf("new chat under Settings' float32: %+v", sm)
	}
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = 0 })
	if c, err = s.CreateConversation(NewConversation{Model: cm.ID}); err != nil {
		t.Fatal(err)
	}
	if sm := samplingOf(c); sm.KVBits != nil {
		t.Errorf("new chat with no Settings choice: %+v, want the engine's default", sm)
	}
	for _, bad := range []store.Settings{{KVBits: 3}, {ContextTokens: 10}} {
		st, _ := s.GetSettings()
		st.KVBits, st.ContextTokens = bad.KVBits, bad.ContextTokens
		if _, err := s.SaveSettings(st); err == nil {
			t.Errorf("settings %+v accepted", bad)
		}
	}
}

// Ask about a transcript judges the chat models for the KV cache the new
// conversation will keep (Settings'): on a machine with room for the
// model with a 4-bit cache only, it refuses with the default (float32) and
// opens the chat on it with a 4-bit one.
func TestAskJudgesTheKVCacheTheChatKeeps(t *testing.T) {
	a, _ := chatApp(t, func(cache string) { putSnapshot(t, cache, "test/good-chat", tinyChatModel(t)) })
	s := a.Service
	good := waitChatModel(t, s, "hf:test/good-chat@"+testCommit)
	admit := func(q nn.KVQuant) int64 {
		e, err := engine.Estimate(good.Path, engine.EstimateOptions{KV: q})
		if err != nil {
			t.Fatal(err)
		}
		return runner.Admission(runner.Chat, e)
	}
	budget := (admit(nn.KVQuant{Bits: 4}) + admit(nn.KVQuant{})) / 2
	setBudget(a, budget)

	tr, err := a.DB.SaveTranscript(context.Background(), store.Transcript{SourcePath: "/x/a.wav", SourceName: "a.wav", Model: "m", Language: "en",
		Segments: json.RawMessage(`[{"start":0,"end":2,"text":" We ship on Friday."}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AskAboutTranscript(tr.ID); err == nil || !strings.Contains(err.Error(), "too big") {
		t.Fatalf("the default cache, too big for the budget: %v", err)
	}
	saveSettings(t, a, func(st *store.Settings) { st.KVBits = 4 })
	conv, err := s.AskAboutTranscript(tr.ID)
	if err != nil || conv.Model != good.ID {
		t.Fatalf("4-bit cache: %v %q", err, conv.Model)
	}
	if sm := samplingOf(conv); sm.KVBits == nil || *sm.KVBits != 4 {
		t.Errorf("the chat keeps %+v, want Settings' 4 bits", sm)
	}
}

// setBudget gives the machine budget bytes for a model: the fit verdicts
// and the runner (the App's and the chat's) both see it.
func setBudget(a *App, budget int64) {
	a.fits.SetBudget(func() int64 { return budget })
	a.Runner.Close()
	a.Runner = runner.New(runner.Options{Available: func() int64 { return budget }})
	a.chats.Runner = a.Runner
}

// samplingOf is a stored conversation's settings (a row that does not
// decode reads as none, which the assertions then catch).
func samplingOf(c store.Conversation) ChatSampling {
	var s ChatSampling
	_ = json.Unmarshal(c.Sampling, &s)
	return s
}
