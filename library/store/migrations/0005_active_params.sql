-- Parameters one token uses, for mixture-of-experts models (0 for dense
-- ones, whose every parameter is active).
ALTER TABLE library_models ADD COLUMN active_params INTEGER NOT NULL DEFAULT 0;
