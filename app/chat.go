package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"hark/library/store"
)

// Chat: conversations live in SQLite (library/store), generation runs in
// the background on one cached engine (chat_run.go) and streams on the
// "chat" event topic.

// defaultTitle names a conversation until its first message does.
const defaultTitle = "New chat"

// ChatSampling is a conversation's generation settings. A nil field means
// "the model's default" (generation_config.json), so models keep their
// tuned values unless the user overrides one.
type ChatSampling struct {
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"topP,omitempty"`
	TopK              *int     `json:"topK,omitempty"`
	MinP              *float64 `json:"minP,omitempty"`
	RepetitionPenalty *float64 `json:"repetitionPenalty,omitempty"`
	PresencePenalty   *float64 `json:"presencePenalty,omitempty"`
	FrequencyPenalty  *float64 `json:"frequencyPenalty,omitempty"`
	MaxTokens         *int     `json:"maxTokens,omitempty"`
	Seed              *uint64  `json:"seed,omitempty"`
	// KVBits / KVGroup keep the KV cache quantized (4 or 8 bits; groups
	// of 32, 64 or 128); Draft "prompt-lookup" turns on speculative
	// decoding by n-gram lookup (chat_engine_opts.go).
	KVBits  *int    `json:"kvBits,omitempty"`
	KVGroup *int    `json:"kvGroup,omitempty"`
	Draft   *string `json:"draft,omitempty"`
	// Chat controls (chat_controls.go).
	Stop       []string `json:"stop,omitempty"`       // end the reply there, never shown
	JSON       string   `json:"json,omitempty"`       // "", "object" or "schema"
	JSONSchema string   `json:"jsonSchema,omitempty"` // with JSON "schema"
	Think      *bool    `json:"think,omitempty"`      // enable_thinking; nil: the template's default
	Tools      string   `json:"tools,omitempty"`      // a JSON list of tool definitions
	Logprobs   *int     `json:"logprobs,omitempty"`   // alternatives per token; nil: off
}

// validate rejects values the engine would refuse, at save time, so a bad
// setting is reported where it is typed rather than on the next send.
func (c ChatSampling) validate() error {
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
func samplingOf(c store.Conversation) ChatSampling {
	var s ChatSampling
	if len(c.Sampling) > 0 {
		if err := json.Unmarshal(c.Sampling, &s); err != nil {
			return ChatSampling{}
		}
	}
	return s
}

// NewConversation is the body of CreateConversation; all fields optional.
type NewConversation struct {
	Title        string       `json:"title"`
	Model        string       `json:"model"`
	SystemPrompt string       `json:"systemPrompt"`
	Sampling     ChatSampling `json:"sampling"`
	// TranscriptID marks a conversation about a transcript (set by
	// AskAboutTranscript).
	TranscriptID int64 `json:"transcriptId,omitempty"`
}

// ConversationUpdate changes the fields that are set (rename, switch model,
// system prompt, sampling settings).
type ConversationUpdate struct {
	Title        *string       `json:"title,omitempty"`
	Model        *string       `json:"model,omitempty"`
	SystemPrompt *string       `json:"systemPrompt,omitempty"`
	Sampling     *ChatSampling `json:"sampling,omitempty"`
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
	return s.app.DB.Conversations(context.Background())
}

// GetConversation returns one conversation.
func (s *Service) GetConversation(id int64) (store.Conversation, error) {
	c, err := s.app.DB.Conversation(context.Background(), id)
	return c, storeErr(err)
}

// CreateConversation starts an empty conversation. Without a model it
// takes the default chat model from Settings.
func (s *Service) CreateConversation(in NewConversation) (store.Conversation, error) {
	ctx := context.Background()
	s.app.withDefaultKV(ctx, &in.Sampling)
	if err := in.Sampling.validate(); err != nil {
		return store.Conversation{}, BadRequest(err)
	}
	if err := s.checkDraftModel(ctx, in.Sampling); err != nil {
		return store.Conversation{}, BadRequest(err)
	}
	if strings.TrimSpace(in.Title) == "" {
		in.Title = defaultTitle
	}
	if in.Model == "" {
		if st, err := s.app.DB.Settings(ctx); err == nil {
			in.Model = st.DefaultChatModel
		}
	}
	raw, err := json.Marshal(in.Sampling)
	if err != nil {
		return store.Conversation{}, err
	}
	c, err := s.app.DB.CreateConversation(ctx, store.Conversation{
		Title: strings.TrimSpace(in.Title), Model: in.Model, SystemPrompt: in.SystemPrompt, Sampling: raw,
		TranscriptID: in.TranscriptID,
	})
	if err == nil {
		s.app.Events.Publish("chat", ChatEvent{ConversationID: c.ID, Type: "conversation"})
	}
	return c, err
}

// UpdateConversation renames a conversation or changes its model, system
// prompt or sampling settings.
func (s *Service) UpdateConversation(id int64, in ConversationUpdate) (store.Conversation, error) {
	ctx := context.Background()
	c, err := s.app.DB.Conversation(ctx, id)
	if err != nil {
		return c, storeErr(err)
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" {
			return c, BadRequest(errors.New("a conversation needs a title"))
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
			return c, BadRequest(err)
		}
		if err := s.checkDraftModel(ctx, *in.Sampling); err != nil {
			return c, BadRequest(err)
		}
		if c.Sampling, err = json.Marshal(in.Sampling); err != nil {
			return c, err
		}
	}
	c, err = s.app.DB.UpdateConversation(ctx, c)
	if err == nil {
		s.app.Events.Publish("chat", ChatEvent{ConversationID: c.ID, Type: "conversation"})
	}
	return c, storeErr(err)
}

// DeleteConversation stops any reply being written in it and deletes it
// with its messages.
func (s *Service) DeleteConversation(id int64) error {
	s.app.chat().stopAndWait(id)
	if err := storeErr(s.app.DB.DeleteConversation(context.Background(), id)); err != nil {
		return err
	}
	s.app.Events.Publish("chat", ChatEvent{ConversationID: id, Type: "deleted"})
	return nil
}

// GetMessages returns a conversation's messages in order, with the tool
// calls of its replies (chat_tools.go).
func (s *Service) GetMessages(id int64) ([]ChatMessage, error) {
	ctx := context.Background()
	c, err := s.app.DB.Conversation(ctx, id)
	if err != nil {
		return nil, storeErr(err)
	}
	msgs, err := s.app.DB.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	return withToolCalls(s.app.chat().withoutRunningDraft(id, msgs), hasTools(c)), nil
}

// ExportConversation renders a conversation as Markdown.
func (s *Service) ExportConversation(id int64) (string, error) {
	_, md, err := s.renderConversation(id)
	return md, err
}

// SaveConversationExport saves the Markdown export where the native save
// dialog says (Downloads without one) and returns its path, "" when the
// user cancelled: the desktop window's Export.
func (s *Service) SaveConversationExport(id int64) (string, error) {
	c, md, err := s.renderConversation(id)
	if err != nil {
		return "", err
	}
	return s.app.saveExport(titleFileName(c.Title, id)+".md", []byte(md), FileFilter{DisplayName: "Markdown", Pattern: "*.md"})
}

func (s *Service) renderConversation(id int64) (store.Conversation, string, error) {
	ctx := context.Background()
	c, err := s.app.DB.Conversation(ctx, id)
	if err != nil {
		return c, "", storeErr(err)
	}
	msgs, err := s.app.DB.Messages(ctx, id)
	if err != nil {
		return c, "", err
	}
	return c, exportMarkdown(c, msgs), nil
}

// titleFileName turns a conversation title into a file name: path
// separators, characters Windows and macOS refuse, and control characters
// become "_", and it is cut to 60 characters.
func titleFileName(title string, id int64) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(title) {
		if n == 60 {
			break
		}
		if unicode.IsControl(r) || strings.ContainsRune(`/\:*?"<>|`, r) {
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	name := strings.Trim(strings.TrimSpace(b.String()), ".")
	if strings.Trim(name, "_ ") == "" {
		return fmt.Sprintf("conversation-%d", id)
	}
	return name
}

// claimReply loads conversation id with the model it replies with and
// claims its reply slot: the thread's tail is only stable once no reply
// runs. The caller starts the reply or releases the slot.
func (s *Service) claimReply(ctx context.Context, id int64) (store.Conversation, error) {
	c, err := s.app.DB.Conversation(ctx, id)
	if err != nil {
		return c, storeErr(err)
	}
	if c.Model = s.modelFor(ctx, c); c.Model == "" {
		return c, BadRequest(errNoModel)
	}
	return c, s.app.chat().claim(id)
}

// SendMessage stores the user's message and starts the reply in the
// background; its text streams on the "chat" topic.
func (s *Service) SendMessage(id int64, in SendRequest) (SendResult, error) {
	ctx := context.Background()
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return SendResult{}, BadRequest(errors.New("the message is empty"))
	}
	rt := s.app.chat()
	c, err := s.claimReply(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	if c.Title == "" || c.Title == defaultTitle {
		c.Title = titleFrom(text)
	}
	if c, err = s.app.DB.UpdateConversation(ctx, c); err != nil {
		rt.release(id)
		return SendResult{}, storeErr(err)
	}
	m, err := s.app.DB.AddMessage(ctx, store.Message{ConversationID: id, Role: "user", Content: in.Text})
	if err != nil {
		rt.release(id)
		return SendResult{}, err
	}
	// The title may have just changed: the list shows it.
	s.app.Events.Publish("chat", ChatEvent{ConversationID: id, Type: "conversation"})
	rt.start(c)
	return SendResult{Conversation: c, Message: m}, nil
}

// Regenerate drops the last reply (if the thread ends with one) and
// writes it again.
func (s *Service) Regenerate(id int64) (store.Conversation, error) {
	ctx := context.Background()
	rt := s.app.chat()
	c, err := s.claimReply(ctx, id)
	if err != nil {
		return c, err
	}
	msgs, err := s.app.DB.Messages(ctx, id)
	if err != nil {
		rt.release(id)
		return c, err
	}
	if len(msgs) == 0 {
		rt.release(id)
		return c, BadRequest(errors.New("nothing to regenerate: the conversation is empty"))
	}
	if last := msgs[len(msgs)-1]; last.Role == "assistant" {
		if err := s.app.DB.DeleteMessagesFrom(ctx, id, last.ID); err != nil {
			rt.release(id)
			return c, err
		}
	}
	rt.start(c)
	return c, nil
}

// StopGeneration stops the reply being written in a conversation; what
// was written so far is kept, marked as stopped. Stopping when nothing
// runs is not an error (the reply may just have finished).
func (s *Service) StopGeneration(id int64) error {
	s.app.chat().stop(id)
	return nil
}

// ChatStatus reports the reply in progress (if any) and the loaded model,
// so a reloaded page can pick up a reply mid-stream.
func (s *Service) ChatStatus() (ChatStatusInfo, error) { return s.app.chat().status(), nil }

// ListChatModels returns the library's chat models Hark can run.
func (s *Service) ListChatModels() ([]ChatModel, error) {
	return chatModels(context.Background(), s.app.library())
}

// modelFor is the conversation's model, or the default chat model for a
// conversation started before any model was chosen.
func (s *Service) modelFor(ctx context.Context, c store.Conversation) string {
	if c.Model != "" {
		return c.Model
	}
	if st, err := s.app.DB.Settings(ctx); err == nil {
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
		return NotFound(err)
	}
	return err
}

// chatRoutes mirror the bound methods one to one (see api.ts): the
// conversation id is the {id} path segment, a body is the last argument.
func (s *Service) chatRoutes(r *router) {
	r.handle("GET /api/chats", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ListConversations)
	})
	r.handle("POST /api/chats", func(w http.ResponseWriter, req *http.Request) error {
		var in NewConversation
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (store.Conversation, error) { return s.CreateConversation(in) })
	})
	r.handle("GET /api/chat/status", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ChatStatus)
	})
	r.handle("GET /api/chat/models", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, s.ListChatModels)
	})
	r.handle("GET /api/chats/{id}", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (store.Conversation, error) { return s.GetConversation(id) })
	}))
	r.handle("PATCH /api/chats/{id}", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		var in ConversationUpdate
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (store.Conversation, error) { return s.UpdateConversation(id, in) })
	}))
	r.handle("DELETE /api/chats/{id}", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		if err := s.DeleteConversation(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	r.handle("GET /api/chats/{id}/messages", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() ([]ChatMessage, error) { return s.GetMessages(id) })
	}))
	r.handle("GET /api/chats/{id}/export", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (string, error) { return s.ExportConversation(id) })
	}))
	r.handle("POST /api/chats/{id}/save", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (string, error) { return s.SaveConversationExport(id) })
	}))
	r.handle("POST /api/chats/{id}/messages", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		var in SendRequest
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (SendResult, error) { return s.SendMessage(id, in) })
	}))
	r.handle("POST /api/chats/{id}/regenerate", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		return reply(w, func() (store.Conversation, error) { return s.Regenerate(id) })
	}))
	s.toolRoutes(r)
	s.draftRoutes(r)
	r.handle("POST /api/chats/{id}/stop", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		if err := s.StopGeneration(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
}
