package app

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"hark/app/chat"
	"hark/library/store"
)

// Chat (app/chat): conversations live in SQLite, replies are written in
// the background and stream on the "chat" event topic. The bound methods
// and routes below delegate to the chat service, under the names the
// shells and the page have always used.

// The chat types under their app names (JSON unchanged).
type (
	ChatEvent          = chat.Event
	ChatStats          = chat.Stats
	ChatStatusInfo     = chat.Status
	ChatSampling       = chat.Sampling
	ChatModel          = chat.Model
	ChatMessage        = chat.Message
	ChatToolCall       = chat.ToolCall
	LiveStats          = chat.LiveStats
	NewConversation    = chat.NewConversation
	ConversationUpdate = chat.ConversationUpdate
	SendRequest        = chat.SendRequest
	SendResult         = chat.SendResult
	ToolAnswer         = chat.ToolAnswer
)

// ListConversations returns every conversation, most recent first.
func (s *Service) ListConversations() ([]store.Conversation, error) {
	return s.app.chats.ListConversations()
}

// GetConversation returns one conversation.
func (s *Service) GetConversation(id int64) (store.Conversation, error) {
	return s.app.chats.GetConversation(id)
}

// CreateConversation starts an empty conversation. Without a model it
// takes the default chat model from Settings.
func (s *Service) CreateConversation(in NewConversation) (store.Conversation, error) {
	return s.app.chats.CreateConversation(in)
}

// UpdateConversation renames a conversation or changes its model, system
// prompt or sampling settings.
func (s *Service) UpdateConversation(id int64, in ConversationUpdate) (store.Conversation, error) {
	return s.app.chats.UpdateConversation(id, in)
}

// DeleteConversation stops any reply being written in it and deletes it
// with its messages.
func (s *Service) DeleteConversation(id int64) error { return s.app.chats.DeleteConversation(id) }

// GetMessages returns a conversation's messages in order, with the tool
// calls of its replies.
func (s *Service) GetMessages(id int64) ([]ChatMessage, error) { return s.app.chats.GetMessages(id) }

// ExportConversation renders a conversation as Markdown.
func (s *Service) ExportConversation(id int64) (string, error) {
	_, md, err := s.app.chats.Export(id)
	return md, err
}

// SaveConversationExport saves the Markdown export where the native save
// dialog says (Downloads without one) and returns its path, "" when the
// user cancelled: the desktop window's Export.
func (s *Service) SaveConversationExport(id int64) (string, error) {
	c, md, err := s.app.chats.Export(id)
	if err != nil {
		return "", err
	}
	return s.app.saveExport(titleFileName(c.Title, id)+".md", []byte(md), FileFilter{DisplayName: "Markdown", Pattern: "*.md"})
}

// SendMessage stores the user's message and starts the reply in the
// background; its text streams on the "chat" topic.
func (s *Service) SendMessage(id int64, in SendRequest) (SendResult, error) {
	return s.app.chats.SendMessage(id, in)
}

// Regenerate drops the last reply (if the thread ends with one) and
// writes it again.
func (s *Service) Regenerate(id int64) (store.Conversation, error) { return s.app.chats.Regenerate(id) }

// AnswerToolCall stores the result of one of the model's tool calls and
// starts the next reply, which reads it.
func (s *Service) AnswerToolCall(id int64, in ToolAnswer) (SendResult, error) {
	return s.app.chats.AnswerToolCall(id, in)
}

// StopGeneration stops the reply being written in a conversation; what
// was written so far is kept, marked as stopped. Stopping when nothing
// runs is not an error (the reply may just have finished).
func (s *Service) StopGeneration(id int64) error {
	s.app.chats.Stop(id)
	return nil
}

// ChatStatus reports the reply in progress (if any) and the loaded model,
// so a reloaded page can pick up a reply mid-stream.
func (s *Service) ChatStatus() (ChatStatusInfo, error) { return s.app.chats.Status(), nil }

// ListChatModels returns the library's chat models Hark can run.
func (s *Service) ListChatModels() ([]ChatModel, error) { return s.app.chats.ListModels() }

// ListDraftModels lists the chat models that can draft for model: the
// others with the same vocabulary, smallest first.
func (s *Service) ListDraftModels(model string) ([]ChatModel, error) {
	return s.app.chats.ListDraftModels(model)
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
	r.handle("POST /api/chats/{id}/tool-results", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		var in ToolAnswer
		if err := decode(req, &in); err != nil {
			return err
		}
		return reply(w, func() (SendResult, error) { return s.AnswerToolCall(id, in) })
	}))
	r.handle("GET /api/chat/drafts", func(w http.ResponseWriter, req *http.Request) error {
		return reply(w, func() ([]ChatModel, error) { return s.ListDraftModels(req.URL.Query().Get("model")) })
	})
	r.handle("POST /api/chats/{id}/stop", byID("conversation", func(w http.ResponseWriter, req *http.Request, id int64) error {
		if err := s.StopGeneration(id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
}
