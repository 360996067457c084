// Package runner owns the models Hark keeps loaded, for chat and speech
// alike, so that the UI, the CLI and the OpenAI-compatible API share them:
//
//   - one memory budget: a model is loaded on first use, after the least
//     recently used idle models are unloaded when it would not fit, and is
//     refused with a clear error when it cannot fit even then (before the
//     OS would swap or kill us);
//   - idle unload: a model nobody used for Options.Idle is freed;
//   - rows: a batched generation reserves its own keys and values
//     (Lease.Reserve) against the same budget, and waits for other rows
//     to leave when it does not fit, or is refused when none is left to
//     wait for (rows.go);
//   - fair queueing: the uses of one model are served first come, first
//     served, and a caller whose context ends while it waits leaves the
//     queue at once.
//
// A Lease from Acquire is exclusive use of one loaded model (a Whisper
// model runs one file at a time; a chat engine's single-sequence paths
// such as speculative decoding own its cache); different models run side
// by side. A chat lease from Share is not exclusive: generations through
// engine.GenerateBatched on it decode together in one batch.
package runner
