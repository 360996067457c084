package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"hark/app/apierr"
	"hark/app/fit"
	"hark/app/runner"
	"hark/library"
	"hark/library/store"
)

// Deps are what the chat feature is given by app's wiring.
type Deps struct {
	DB      *store.DB
	Log     *slog.Logger
	Publish func(topic string, data any) // the UI's event hub
	Runner  *runner.Runner
	Library *library.Library
	// Fits is the App's cache of memory estimates, for the model
	// picker's fit verdicts (nil: none).
	Fits *fit.Cache
}

// Service is the chat feature: conversations, the replies being written,
// and the model lists of the chat page.
type Service struct {
	Deps
	rt *chatRuntime

	// DraftEvery is how often a reply's draft is rewritten while it
	// streams (draft.go); TokenHook, when set (tests only), runs on every
	// generated token, so a crash test can slow decode down and kill
	// mid-reply. Set them before the first reply.
	DraftEvery time.Duration
	TokenHook  func()

	// vocabKeys caches a fingerprint of each model folder's vocabulary,
	// so the Drafting list offers only the models whose tokenizer
	// matches (draftmodel.go): model path → string ("" when unreadable).
	vocabKeys sync.Map
}

// Start makes the chat service; Close stops its replies.
func Start(d Deps) *Service {
	s := &Service{Deps: d, DraftEvery: defaultDraftEvery}
	s.rt = &chatRuntime{s: s, runs: map[int64]*chatRun{}}
	return s
}

// Close stops every reply being written and waits until each is stored
// (the runner frees the engines).
func (s *Service) Close() { s.rt.close() }

// DefaultTitle names a conversation until its first message does.
const DefaultTitle = "New chat"

// Sampling is a conversation's generation settings. A nil field means
// "the model's default" (generation_config.json), so models keep their
// tuned values unless the user overrides one.
type Sampling struct {
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"topP,omitempty"`
	TopK              *int     `json:"topK,omitempty"`
	MinP              *float64 `json:"minP,omitempty"`
	RepetitionPenalty *float64 `json:"repetitionPenalty,omitempty"`
	PresencePenalty   *float64 `json:"presencePenalty,omitempty"`
	FrequencyPenalty  *float64 `json:"frequencyPenalty,omitempty"`
	MaxTokens         *int     `json:"maxTokens,omitempty"`
	Seed              *uint64  `json:"seed,omitempty"`
	// KVBits / KVGroup choose the KV cache (nil or 0: the engine's
	// default, engine.DefaultKV; nn.KVFloat32Bits: float32 as stated; 16: f16; 4
	// or 8 bits quantized in groups of 32, 64 or 128); Draft
	// "prompt-lookup" turns on speculative decoding by n-gram lookup
	// (engineopts.go).
	KVBits  *int    `json:"kvBits,omitempty"`
	KVGroup *int    `json:"kvGroup,omitempty"`
	Draft   *string `json:"draft,omitempty"`
	// Chat controls (controls.go).
	Stop       []string `json:"stop,omitempty"`       // end the reply there, never shown
	JSON       string   `json:"json,omitempty"`       // "", "object" or "schema"
	JSONSchema string   `json:"jsonSchema,omitempty"` // with JSON "schema"
	Think      *bool    `json:"think,omitempty"`      // enable_thinking; nil: the template's default
	Tools      string   `json:"tools,omitempty"`      // a JSON list of tool definitions
	Logprobs   *int     `json:"logprobs,omitempty"`   // alternatives per token; nil: off
}

// validate rejects values the engine would refuse, at save time, so a bad
// setting is reported where it is typed rather than on the next send.
func (c Sampling) validate() error {
	check := func(name string, v *float64, lo, hi float64) error {
		if v != nil && (*v < lo || *v > hi || *v != *v) {
			return fmt.Errorf("%s %v must be between %v and %v", name, *v, lo, hi)
		}
		return nil
	}
	return errors.Join(
		c.validateControls(),
		check("temperature", c.Temperature, 0, 5),
		check("top_p", c.TopP, 0, 1),
		check("min_p", c.MinP, 0, 1),
		check("repetition penalty", c.RepetitionPenalty, 0, 10),
		check("presence penalty", c.PresencePenalty, -2, 2),
		check("frequency penalty", c.FrequencyPenalty, -2, 2),
		func() error {
			if c.TopK != nil && *c.TopK < 0 {
				return fmt.Errorf("top_k %d must be 0 (off) or more", *c.TopK)
			}
			if c.MaxTokens != nil && *c.MaxTokens < 0 {
				return fmt.Errorf("max tokens %d must be 0 (no limit) or more", *c.MaxTokens)
			}
			return nil
		}(),
		c.validateEngine(),
	)
}

// samplingOf decodes a stored conversation's settings; a row this version
// cannot read falls back to the model's defaults rather than failing chat.
func samplingOf(c store.Conversation) Sampling {
	var s Sampling
	if len(c.Sampling) > 0 {
		if err := json.Unmarshal(c.Sampling, &s); err != nil {
			return Sampling{}
		}
	}
	return s
}

// NewConversation is the body of CreateConversation; all fields optional.
type NewConversation struct {
	Title        string   `json:"title"`
	Model        string   `json:"model"`
	SystemPrompt string   `json:"systemPrompt"`
	Sampling     Sampling `json:"sampling"`
	// TranscriptID marks a conversation about a transcript (set by
	// AskAboutTranscript).
	TranscriptID int64 `json:"transcriptId,omitempty"`
}

// ConversationUpdate changes the fields that are set (rename, switch model,
// system prompt, sampling settings).
type ConversationUpdate struct {
	Title        *string   `json:"title,omitempty"`
	Model        *string   `json:"model,omitempty"`
	SystemPrompt *string   `json:"systemPrompt,omitempty"`
	Sampling     *Sampling `json:"sampling,omitempty"`
}

// SendRequest is a user message to add to a conversation.
type SendRequest struct {
	Text string `json:"text"`
}

// SendResult is what SendMessage stored; the reply arrives as events.
type SendResult struct {
	Conversation store.Conversation `json:"conversation"`
	Message      store.Message      `json:"message"`
}

// ListConversations returns every conversation, most recent first.
func (s *Service) ListConversations() ([]store.Conversation, error) {
	return s.DB.Conversations(context.Background())
}

// GetConversation returns one conversation.
func (s *Service) GetConversation(id int64) (store.Conversation, error) {
	c, err := s.DB.Conversation(context.Background(), id)
	return c, storeErr(err)
}

// CreateConversation starts an empty conversation. Without a model it
// takes the default chat model from Settings.
func (s *Service) CreateConversation(in NewConversation) (store.Conversation, error) {
	ctx := context.Background()
	s.withDefaultKV(ctx, &in.Sampling)
	if err := in.Sampling.validate(); err != nil {
		return store.Conversation{}, apierr.BadRequest(err)
	}
	if err := s.checkDraftModel(ctx, in.Sampling); err != nil {
		return store.Conversation{}, apierr.BadRequest(err)
	}
	if strings.TrimSpace(in.Title) == "" {
		in.Title = DefaultTitle
	}
	if in.Model == "" {
		if st, err := s.DB.Settings(ctx); err == nil {
			in.Model = st.DefaultChatModel
		}
	}
	raw, err := json.Marshal(in.Sampling)
	if err != nil {
		return store.Conversation{}, err
	}
	c, err := s.DB.CreateConversation(ctx, store.Conversation{
		Title: strings.TrimSpace(in.Title), Model: in.Model, SystemPrompt: in.SystemPrompt, Sampling: raw,
		TranscriptID: in.TranscriptID,
	})
	if err == nil {
		s.Publish("chat", Event{ConversationID: c.ID, Type: "conversation"})
	}
	return c, err
}

// UpdateConversation renames a conversation or changes its model, system
// prompt or sampling settings.
func (s *Service) UpdateConversation(id int64, in ConversationUpdate) (store.Conversation, error) {
	ctx := context.Background()
	c, err := s.DB.Conversation(ctx, id)
	if err != nil {
		return c, storeErr(err)
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" {
			return c, apierr.BadRequest(errors.New("a conversation needs a title"))
		}
		c.Title = t
	}
	if in.Model != nil {
		c.Model = strings.TrimSpace(*in.Model)
	}
	if in.SystemPrompt != nil {
		c.SystemPrompt = *in.SystemPrompt
	}
	if in.Sampling != nil {
		if err := in.Sampling.validate(); err != nil {
			return c, apierr.BadRequest(err)
		}
		if err := s.checkDraftModel(ctx, *in.Sampling); err != nil {
			return c, apierr.BadRequest(err)
		}
		if c.Sampling, err = json.Marshal(in.Sampling); err != nil {
			return c, err
		}
	}
	c, err = s.DB.UpdateConversation(ctx, c)
	if err == nil {
		s.Publish("chat", Event{ConversationID: c.ID, Type: "conversation"})
	}
	return c, storeErr(err)
}

// DeleteConversation stops any reply being written in it and deletes it
// with its messages.
func (s *Service) DeleteConversation(id int64) error {
	s.rt.stopAndWait(id)
	if err := storeErr(s.DB.DeleteConversation(context.Background(), id)); err != nil {
		return err
	}
	s.Publish("chat", Event{ConversationID: id, Type: "deleted"})
	return nil
}

// GetMessages returns a conversation's messages in order, with the tool
// calls of its replies (tools.go).
func (s *Service) GetMessages(id int64) ([]Message, error) {
	ctx := context.Background()
	c, err := s.DB.Conversation(ctx, id)
	if err != nil {
		return nil, storeErr(err)
	}
	msgs, err := s.DB.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	return withToolCalls(s.rt.withoutRunningDraft(id, msgs), hasTools(c)), nil
}

// Export renders conversation id as Markdown, with the conversation.
func (s *Service) Export(id int64) (store.Conversation, string, error) {
	ctx := context.Background()
	c, err := s.DB.Conversation(ctx, id)
	if err != nil {
		return c, "", storeErr(err)
	}
	msgs, err := s.DB.Messages(ctx, id)
	if err != nil {
		return c, "", err
	}
	return c, exportMarkdown(c, msgs), nil
}

// claimReply loads conversation id with the model it replies with and
// claims its reply slot: the thread's tail is only stable once no reply
// runs. The caller starts the reply or releases the slot.
func (s *Service) claimReply(ctx context.Context, id int64) (store.Conversation, error) {
	c, err := s.DB.Conversation(ctx, id)
	if err != nil {
		return c, storeErr(err)
	}
	if c.Model = s.modelFor(ctx, c); c.Model == "" {
		return c, apierr.BadRequest(errNoModel)
	}
	return c, s.rt.claim(id)
}

// SendMessage stores the user's message and starts the reply in the
// background; its text streams on the "chat" topic.
func (s *Service) SendMessage(id int64, in SendRequest) (SendResult, error) {
	ctx := context.Background()
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return SendResult{}, apierr.BadRequest(errors.New("the message is empty"))
	}
	rt := s.rt
	c, err := s.claimReply(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	if c.Title == "" || c.Title == DefaultTitle {
		c.Title = titleFrom(text)
	}
	if c, err = s.DB.UpdateConversation(ctx, c); err != nil {
		rt.release(id)
		return SendResult{}, storeErr(err)
	}
	m, err := s.DB.AddMessage(ctx, store.Message{ConversationID: id, Role: "user", Content: in.Text})
	if err != nil {
		rt.release(id)
		return SendResult{}, err
	}
	// The title may have just changed: the list shows it.
	s.Publish("chat", Event{ConversationID: id, Type: "conversation"})
	rt.start(c)
	return SendResult{Conversation: c, Message: m}, nil
}

// Regenerate drops the last reply (if the thread ends with one) and
// writes it again.
func (s *Service) Regenerate(id int64) (store.Conversation, error) {
	ctx := context.Background()
	rt := s.rt
	c, err := s.claimReply(ctx, id)
	if err != nil {
		return c, err
	}
	msgs, err := s.DB.Messages(ctx, id)
	if err != nil {
		rt.release(id)
		return c, err
	}
	if len(msgs) == 0 {
		rt.release(id)
		return c, apierr.BadRequest(errors.New("nothing to regenerate: the conversation is empty"))
	}
	if last := msgs[len(msgs)-1]; last.Role == "assistant" {
		if err := s.DB.DeleteMessagesFrom(ctx, id, last.ID); err != nil {
			rt.release(id)
			return c, err
		}
	}
	rt.start(c)
	return c, nil
}

// Stop stops the reply being written in a conversation; what
// was written so far is kept, marked as stopped. Stopping when nothing
// runs is not an error (the reply may just have finished).
func (s *Service) Stop(id int64) { s.rt.stop(id) }

// Status reports the reply in progress (if any) and the loaded model,
// so a reloaded page can pick up a reply mid-stream.
func (s *Service) Status() Status { return s.rt.status() }

// ListModels returns the library's chat models Hark can run.
func (s *Service) ListModels() ([]Model, error) {
	return s.chatModels(context.Background())
}

// modelFor is the conversation's model, or the default chat model for a
// conversation started before any model was chosen.
func (s *Service) modelFor(ctx context.Context, c store.Conversation) string {
	if c.Model != "" {
		return c.Model
	}
	if st, err := s.DB.Settings(ctx); err == nil {
		return st.DefaultChatModel
	}
	return ""
}

var errNoModel = errors.New("no model chosen: pick a chat model (or set a default chat model in Settings)")

// titleFrom makes a short title from a first message.
func titleFrom(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	const max = 48
	if utf8.RuneCountInString(t) <= max {
		return t
	}
	r := []rune(t)[:max]
	if i := strings.LastIndexByte(string(r), ' '); i > max/2 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}

func storeErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound(err)
	}
	return err
}
