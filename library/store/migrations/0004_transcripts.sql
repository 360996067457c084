-- Finished transcripts. Segments are kept as the JSON the exporters read
-- (OpenAI verbose_json shape), so a transcript re-exports without the model.
CREATE TABLE transcripts (
    id          INTEGER PRIMARY KEY,
    source_path TEXT    NOT NULL,
    source_name TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    language    TEXT    NOT NULL DEFAULT '',
    task        TEXT    NOT NULL DEFAULT 'transcribe',
    duration_ms INTEGER NOT NULL DEFAULT 0,
    text        TEXT    NOT NULL DEFAULT '',
    segments    TEXT    NOT NULL DEFAULT '[]',
    created_at  INTEGER NOT NULL
);

CREATE INDEX transcripts_by_time ON transcripts(created_at DESC);
