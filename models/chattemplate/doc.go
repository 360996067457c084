// Package chattemplate renders the Jinja chat templates that Hugging Face
// models ship in tokenizer_config.json, turning a conversation (and tool
// definitions) into the exact prompt text the model was trained on.
//
// # Engine choice
//
// Two pure-Go Jinja engines were measured against the 132 golden cases in
// chat-templates/golden.jsonl (rendered by @huggingface/jinja and checked
// against Python Jinja2 configured like transformers), each given only the
// HF globals raise_exception and strftime_now (see TestEngineComparison):
//
//   - github.com/ardanlabs/jinja v1.8.0:        120/132
//   - github.com/nikolalohinski/gonja/v2 v2.9.1: 92/132
//
// ardanlabs/jinja is used. Its 12 failures all came from one place: its
// tojson sorts keys (and escapes <, >, &) when indent is given, while
// transformers keeps the caller's key order. Its built-in filters cannot be
// replaced, so Parse renames the tojson filter inside template tags to a
// Hark implementation with Python json.dumps semantics (tojson.go). With
// that and an injectable clock for strftime_now, all 132 cases pass.
// (v1.9+ of the engine needs Go 1.27, hence the pin.)
package chattemplate
