-- A tool result (role 'tool') answers one tool call of an earlier reply:
-- its id (call_<message>_<index>, see app/chat_tools.go) and the tool's
-- name, shown on the result's card. Empty on every other message.
ALTER TABLE messages ADD COLUMN tool_call_id TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN tool_name    TEXT NOT NULL DEFAULT '';
