// Package tokenizer implements Hugging Face tokenizer.json tokenizers and
// tiktoken rank files in pure Go, so Hark can encode prompts and stream
// decoded text without Python.
//
// Supported tokenizer.json components (anything else is a load error that
// names the type):
//
//   - model: BPE, with merges as "a b" strings or ["a", "b"] pairs,
//     byte_fallback, unk_token/fuse_unk and ignore_merges;
//   - normalizer: NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip,
//     Sequence;
//   - pre_tokenizer: ByteLevel, Split (string or regex, every behavior,
//     invert), Metaspace, Digits, Whitespace, WhitespaceSplit, Sequence;
//   - decoder: ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip,
//     Sequence;
//   - post_processor: TemplateProcessing, ByteLevel, RobertaProcessing,
//     BertProcessing, Sequence.
//
// Split regexes are Oniguruma patterns with lookahead, which Go's regexp
// cannot run; regex.go holds a small backtracking engine for them and
// scan.go a hand-written scanner for the GPT-2, Llama 3 and Qwen2 patterns.
//
// tokenizer_config.json, when beside tokenizer.json, supplies BOS/EOS and
// add_bos_token/add_eos_token (which decide for the Llama and Gemma
// tokenizer classes, whose transformers constructors rebuild the
// post-processor from them, and otherwise only when tokenizer.json's own
// post-processor adds nothing) and clean_up_tokenization_spaces (see
// CleanUpTokenization).
//
// Verified against: the HF goldens for Qwen3, Llama 3 and Gemma 3, llama.cpp's
// qwen2, llama-bpe and gpt-2 vectors, llama2.c's encoder on stories260K and
// Whisper's multilingual tiktoken goldens (see golden_test.go).
package tokenizer
