// Package library finds the models on this machine and keeps an index of
// them in Hark's database. Models are read where they are, never converted
// or copied: the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub or
// ~/.cache/huggingface/hub), LM Studio's models folder, and any folder of
// model directories the user adds in Settings.
//
// Identity: a Hugging Face snapshot is known by its fingerprint
// "hf:org/repo@<commit>", commit in lowercase hex, with the refs pointing at
// it stored beside it. A model directory outside the HF cache has no hf
// fingerprint; it is known by its path and a content ID (see ContentID).
// Every snapshot also carries a config fingerprint, a hash of config.json
// that ignores formatting (see ConfigFingerprint).
//
// The index is kept current by a recursive fsnotify watcher with debounced,
// per-repo incremental updates, falling back to a periodic rescan (and
// saying so in Status) when the OS runs out of watches.
package library
