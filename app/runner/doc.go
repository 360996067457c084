// Package runner owns the models Hark keeps loaded, for chat and speech
// alike, so that the UI, the CLI and the OpenAI-compatible API share them:
//
//   - one memory budget: a model is loaded on first use, after the least
//     recently used idle models are unloaded when it would not fit, and is
//     refused with a clear error when it cannot fit even then (before the
//     OS would swap or kill us);
//   - idle unload: a model nobody used for Options.Idle is freed;
//   - fair queueing: the uses of one model are served first come, first
//     served, and a caller whose context ends while it waits leaves the
//     queue at once.
//
// A Lease is exclusive use of one loaded model (an engine owns a single
// KV cache, a Whisper model runs one file at a time); different models run
// side by side.
package runner
