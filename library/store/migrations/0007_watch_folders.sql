-- Watch folders (MacWhisper's "hot folder"): each new audio file in one is
-- transcribed with the folder's model and options, and the transcript is
-- written beside it (output_dir '') or into output_dir, in formats (a
-- comma list such as "txt,srt"). options is the app's TranscribeOptions
-- as JSON, opaque here.
CREATE TABLE watch_folders (
    id         INTEGER PRIMARY KEY,
    path       TEXT    NOT NULL UNIQUE,
    output_dir TEXT    NOT NULL DEFAULT '',
    formats    TEXT    NOT NULL DEFAULT 'txt',
    options    TEXT    NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);

-- The files of a folder that need no more work, so a restart does not
-- redo them: done (transcript written), failed, skipped (not audio), or
-- existing (there before the folder was watched). size and mtime_ms tell a
-- file replaced under the same name from the one handled.
CREATE TABLE watch_files (
    folder_id   INTEGER NOT NULL REFERENCES watch_folders(id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ms    INTEGER NOT NULL,
    state       TEXT    NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '',
    finished_at INTEGER NOT NULL,
    PRIMARY KEY (folder_id, name)
);
