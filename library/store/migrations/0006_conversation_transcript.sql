-- The transcript a conversation was opened about ("Ask about this
-- transcript"), shown as an attachment card in the thread; 0 for none. No
-- foreign key: deleting a transcript leaves the conversation, whose card
-- then says the transcript is gone.
ALTER TABLE conversations ADD COLUMN transcript_id INTEGER NOT NULL DEFAULT 0;
