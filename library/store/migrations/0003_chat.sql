-- Conversations and their messages. Sampling settings and stats are JSON
-- so new knobs need no migration.
CREATE TABLE conversations (
    id            INTEGER PRIMARY KEY,
    title         TEXT    NOT NULL DEFAULT '',
    model         TEXT    NOT NULL DEFAULT '',
    system_prompt TEXT    NOT NULL DEFAULT '',
    sampling      TEXT    NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT    NOT NULL,
    stats           TEXT    NOT NULL DEFAULT '{}',
    created_at      INTEGER NOT NULL
);

CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX conversations_by_update ON conversations(updated_at DESC);
