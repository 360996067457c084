-- The model library index (package library). One row per snapshot keyed by
-- its folder, since the same snapshot may sit in two roots; the watcher
-- replaces all rows of a unit (a models--org--name folder, or a top-level
-- folder of model dirs) at once.
CREATE TABLE library_models (
    path           TEXT PRIMARY KEY,
    id             TEXT NOT NULL,
    fingerprint    TEXT NOT NULL DEFAULT '',
    source         TEXT NOT NULL,
    root           TEXT NOT NULL,
    unit           TEXT NOT NULL,
    repo           TEXT NOT NULL DEFAULT '',
    commit_hash    TEXT NOT NULL DEFAULT '',
    content_id     TEXT NOT NULL DEFAULT '',
    config_hash    TEXT NOT NULL DEFAULT '',
    model_type     TEXT NOT NULL DEFAULT '',
    architectures  TEXT NOT NULL DEFAULT '[]', -- JSON array
    kind           TEXT NOT NULL,
    family         TEXT NOT NULL DEFAULT '',
    params         INTEGER NOT NULL DEFAULT 0,
    dtype          TEXT NOT NULL DEFAULT '',
    quant_bits     INTEGER,                    -- NULL when not quantized
    quant_group    INTEGER,
    quant_mode     TEXT,
    quant          TEXT,                       -- JSON incl. per-layer overrides
    context_length INTEGER NOT NULL DEFAULT 0,
    size_bytes     INTEGER NOT NULL DEFAULT 0,
    modified_ms    INTEGER NOT NULL DEFAULT 0,
    supported      INTEGER NOT NULL DEFAULT 0,
    reason         TEXT NOT NULL DEFAULT '',
    problems       TEXT NOT NULL DEFAULT '[]', -- JSON array of sentences
    incomplete     INTEGER NOT NULL DEFAULT 0,
    downloading    INTEGER NOT NULL DEFAULT 0,
    scanned_ms     INTEGER NOT NULL
);
CREATE INDEX library_models_unit ON library_models(unit);
CREATE INDEX library_models_fingerprint ON library_models(fingerprint);
CREATE INDEX library_models_repo ON library_models(repo);

CREATE TABLE library_refs (
    path TEXT NOT NULL REFERENCES library_models(path) ON DELETE CASCADE,
    ref  TEXT NOT NULL,
    PRIMARY KEY (path, ref)
);

CREATE TABLE library_files (
    path    TEXT NOT NULL REFERENCES library_models(path) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    size    INTEGER NOT NULL,
    blob    TEXT NOT NULL DEFAULT '',
    problem TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (path, name)
);
