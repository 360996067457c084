-- The transcription queue's unfinished entries (queued, running or
-- interrupted), so a crash or kill -9 loses none: the next start puts them
-- back as interrupted, with their audio. Finished entries are removed, so
-- the table only ever holds what still needs the user. id is the queue's
-- own id ("t12"); src is the file read (the path, or an upload's copy that
-- must not be deleted while its row is here); options is the app's
-- TranscribeOptions as JSON, opaque here.
CREATE TABLE transcribe_queue (
    id       TEXT    PRIMARY KEY,
    name     TEXT    NOT NULL,
    path     TEXT    NOT NULL DEFAULT '',
    src      TEXT    NOT NULL,
    uploaded INTEGER NOT NULL DEFAULT 0,
    options  TEXT    NOT NULL DEFAULT '{}',
    state    TEXT    NOT NULL,
    added_at INTEGER NOT NULL,
    seq      INTEGER NOT NULL
);

-- Resume points of queue entries: while a file is transcribed, the
-- engine's state after each window (with that window's segments) is added
-- as one row, so segments are saved as they are decoded and a retry after
-- a crash starts from the last saved window. Row n = 0 is a header naming
-- the file and options the rows belong to. No foreign key: the queue rows
-- are rewritten as a set, and these must outlive that.
CREATE TABLE transcribe_checkpoints (
    queue_id TEXT    NOT NULL,
    n        INTEGER NOT NULL,
    body     TEXT    NOT NULL,
    PRIMARY KEY (queue_id, n)
);
