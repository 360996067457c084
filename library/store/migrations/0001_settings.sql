-- Settings are a small key/value table of JSON values, so new settings need
-- no migration; typed access lives in settings.go.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
