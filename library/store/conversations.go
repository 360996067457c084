package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is returned when a row asked for by id does not exist.
var ErrNotFound = errors.New("not found")

// Conversation is one chat thread with its own system prompt and sampling.
type Conversation struct {
	ID           int64           `json:"id"`
	Title        string          `json:"title"`
	Model        string          `json:"model"`
	SystemPrompt string          `json:"systemPrompt"`
	Sampling     json.RawMessage `json:"sampling"`
	// TranscriptID is the transcript the conversation is about, if any.
	TranscriptID int64     `json:"transcriptId,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// Message is one turn of a conversation.
type Message struct {
	ID             int64           `json:"id"`
	ConversationID int64           `json:"conversationId"`
	Role           string          `json:"role"`
	Content        string          `json:"content"`
	Stats          json.RawMessage `json:"stats"`
	CreatedAt      time.Time       `json:"createdAt"`
	// A tool result (role "tool") names the call it answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
}

func rawOr(b json.RawMessage, def string) string {
	if len(b) == 0 || !json.Valid(b) {
		return def
	}
	return string(b)
}

// CreateConversation inserts c and returns it with its id and times set.
func (db *DB) CreateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	now := time.Now()
	c.CreatedAt, c.UpdatedAt = now, now
	c.Sampling = json.RawMessage(rawOr(c.Sampling, "{}"))
	res, err := db.ExecContext(ctx, `INSERT INTO conversations(title, model, system_prompt, sampling, transcript_id, created_at, updated_at) VALUES(?,?,?,?,?,?,?)`,
		c.Title, c.Model, c.SystemPrompt, string(c.Sampling), c.TranscriptID, now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return c, fmt.Errorf("create conversation: %w", classify(err))
	}
	c.ID, _ = res.LastInsertId()
	return c, nil
}

// UpdateConversation saves title, model, system prompt and sampling.
func (db *DB) UpdateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	res, err := db.ExecContext(ctx, `UPDATE conversations SET title=?, model=?, system_prompt=?, sampling=?, updated_at=? WHERE id=?`,
		c.Title, c.Model, c.SystemPrompt, rawOr(c.Sampling, "{}"), time.Now().UnixMilli(), c.ID)
	if err != nil {
		return c, fmt.Errorf("update conversation %d: %w", c.ID, classify(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return c, fmt.Errorf("conversation %d: %w", c.ID, ErrNotFound)
	}
	return db.Conversation(ctx, c.ID)
}

const convCols = `id, title, model, system_prompt, sampling, transcript_id, created_at, updated_at`

func scanConversation(row interface{ Scan(...any) error }) (Conversation, error) {
	var c Conversation
	var sampling string
	var created, updated int64
	err := row.Scan(&c.ID, &c.Title, &c.Model, &c.SystemPrompt, &sampling, &c.TranscriptID, &created, &updated)
	c.Sampling = json.RawMessage(sampling)
	c.CreatedAt, c.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return c, err
}

// Conversation returns one conversation.
func (db *DB) Conversation(ctx context.Context, id int64) (Conversation, error) {
	return queryOne(ctx, db, fmt.Sprintf("conversation %d", id), scanConversation, `SELECT `+convCols+` FROM conversations WHERE id=?`, id)
}

// Conversations lists conversations, most recently updated first.
func (db *DB) Conversations(ctx context.Context) ([]Conversation, error) {
	return queryAll(ctx, db, "list conversations", scanConversation, `SELECT `+convCols+` FROM conversations ORDER BY updated_at DESC, id DESC`)
}

// DeleteConversation removes a conversation and, by cascade, its messages.
func (db *DB) DeleteConversation(ctx context.Context, id int64) error {
	return db.deleteByID(ctx, "conversations", "conversation", id)
}

// deleteByID deletes one row of table, reporting ErrNotFound when there
// was none. table is always a constant from this package.
func (db *DB) deleteByID(ctx context.Context, table, what string, id int64) error {
	res, err := db.ExecContext(ctx, `DELETE FROM `+table+` WHERE id=?`, id)
	if err != nil {
		return fmt.Errorf("delete %s %d: %w", what, id, classify(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %d: %w", what, id, ErrNotFound)
	}
	return nil
}

// queryOne runs a query for one row; no row is ErrNotFound, named by what.
func queryOne[T any](ctx context.Context, db *DB, what string, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) (T, error) {
	v, err := scan(db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return v, classify(err)
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, db *DB, what string, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, classify(err))
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// AddMessage appends a message and touches the conversation.
func (db *DB) AddMessage(ctx context.Context, m Message) (Message, error) {
	now := time.Now()
	m.CreatedAt = now
	m.Stats = json.RawMessage(rawOr(m.Stats, "{}"))
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO messages(conversation_id, role, content, stats, created_at, tool_call_id, tool_name) VALUES(?,?,?,?,?,?,?)`,
			m.ConversationID, m.Role, m.Content, string(m.Stats), now.UnixMilli(), m.ToolCallID, m.ToolName)
		if err != nil {
			return err
		}
		m.ID, _ = res.LastInsertId()
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_at=? WHERE id=?`, now.UnixMilli(), m.ConversationID)
		return err
	})
	if err != nil {
		return m, fmt.Errorf("add message to conversation %d: %w", m.ConversationID, err)
	}
	return m, nil
}

// DeleteMessagesFrom removes message id and every later one in its
// conversation (regenerate replaces the tail of a thread).
func (db *DB) DeleteMessagesFrom(ctx context.Context, conversationID, id int64) error {
	_, err := db.ExecContext(ctx, `DELETE FROM messages WHERE conversation_id=? AND id>=?`, conversationID, id)
	if err != nil {
		return fmt.Errorf("trim conversation %d: %w", conversationID, classify(err))
	}
	return nil
}

// Messages returns a conversation's messages in order.
func (db *DB) Messages(ctx context.Context, conversationID int64) ([]Message, error) {
	return queryAll(ctx, db, fmt.Sprintf("read conversation %d", conversationID), scanMessage,
		`SELECT id, conversation_id, role, content, stats, created_at, tool_call_id, tool_name FROM messages WHERE conversation_id=? ORDER BY id`, conversationID)
}

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var stats string
	var created int64
	err := row.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &stats, &created, &m.ToolCallID, &m.ToolName)
	m.Stats, m.CreatedAt = json.RawMessage(stats), time.UnixMilli(created)
	return m, err
}
