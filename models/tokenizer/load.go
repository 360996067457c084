package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// splitFile reads the top level of tokenizer.json. Small sections are
// decoded with encoding/json; the model is left raw for parseModel.
func splitFile(data []byte) (*fileJSON, error) {
	fields, model, err := objectFieldsNested(data, "model")
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	f := &fileJSON{
		modelFields:   model,
		Normalizer:    fields["normalizer"],
		PreTokenizer:  fields["pre_tokenizer"],
		PostProcessor: fields["post_processor"],
		Decoder:       fields["decoder"],
		Model:         fields["model"],
	}
	if raw := fields["added_tokens"]; !isNull(raw) {
		if err := json.Unmarshal(raw, &f.AddedTokens); err != nil {
			return nil, fmt.Errorf("added_tokens: %w", err)
		}
	}
	if isNull(f.Model) {
		return nil, fmt.Errorf("no model section")
	}
	return f, nil
}

type fileJSON struct {
	AddedTokens   []*AddedToken     `json:"added_tokens"`
	Normalizer    json.RawMessage   `json:"normalizer"`
	PreTokenizer  json.RawMessage   `json:"pre_tokenizer"`
	PostProcessor json.RawMessage   `json:"post_processor"`
	Decoder       json.RawMessage   `json:"decoder"`
	Model         json.RawMessage   `json:"model"`
	modelFields   map[string][]byte // Model's members, nil when it is not an object
}

type modelJSON struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"-"` // filled from the raw fields
	Merges                  json.RawMessage `json:"-"`
	UnkToken                *string         `json:"unk_token"`
	FuseUnk                 bool            `json:"fuse_unk"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	Dropout                 *float64        `json:"dropout"`
}

// configJSON is the part of tokenizer_config.json the tokenizer needs.
type configJSON struct {
	BOSToken     tokenField `json:"bos_token"`
	EOSToken     tokenField `json:"eos_token"`
	AddBOSToken  *bool      `json:"add_bos_token"`
	AddEOSToken  *bool      `json:"add_eos_token"`
	CleanupSpace *bool      `json:"clean_up_tokenization_spaces"`
	Class        string     `json:"tokenizer_class"`
}

// rebuildsPostProcessor are the transformers tokenizer classes whose
// constructor replaces tokenizer.json's post-processor with one built
// from add_bos_token (default true) and add_eos_token (default false)
// (update_post_processor): for them the flags decide, not the file.
// So a Llama-class tokenizer.json that adds <s> beside add_bos_token
// false gets no BOS from Hugging Face (nor from TGI, which does the same).
var rebuildsPostProcessor = map[string]bool{
	"LlamaTokenizer": true, "LlamaTokenizerFast": true, "CodeLlamaTokenizer": true, "CodeLlamaTokenizerFast": true,
	"GemmaTokenizer": true, "GemmaTokenizerFast": true,
}

// tokenField accepts "<s>" or {"content": "<s>", ...} (older configs).
type tokenField string

func (f *tokenField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		err := json.Unmarshal(b, &s)
		*f = tokenField(s)
		return err
	}
	var o struct {
		Content string `json:"content"`
	}
	err := json.Unmarshal(b, &o)
	*f = tokenField(o.Content)
	return err
}

// Load reads a tokenizer from a directory holding tokenizer.json (and
// optionally tokenizer_config.json) or from a tokenizer.json path.
func Load(path string) (*Tokenizer, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var cfg *configJSON
	cfgPath := filepath.Join(filepath.Dir(file), "tokenizer_config.json")
	if cdata, err := os.ReadFile(cfgPath); err == nil {
		if cfg, err = parseConfig(cdata); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", cfgPath, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parse(data, cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", file, err)
	}
	return t, nil
}

// FromJSON builds a tokenizer from the bytes of tokenizer.json and, when not
// nil, tokenizer_config.json.
func FromJSON(tokenizerJSON, configData []byte) (*Tokenizer, error) {
	var cfg *configJSON
	if configData != nil {
		var err error
		if cfg, err = parseConfig(configData); err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: %w", err)
		}
	}
	t, err := parse(tokenizerJSON, cfg)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	return t, nil
}

func parseConfig(data []byte) (*configJSON, error) {
	cfg := &configJSON{}
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func parse(data []byte, cfg *configJSON) (*Tokenizer, error) {
	f, err := splitFile(data)
	if err != nil {
		return nil, err
	}
	model, err := parseModel(f.Model, f.modelFields)
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{model: model, bos: -1, eos: -1}
	if !isNull(f.Normalizer) {
		if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
			return nil, err
		}
	}
	if !isNull(f.PreTokenizer) {
		if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
			return nil, err
		}
	}
	if !isNull(f.Decoder) {
		if t.dec, err = parseDecoder(f.Decoder); err != nil {
			return nil, err
		}
		t.byteLevel = decoderIsByteLevel(f.Decoder)
	}
	if !isNull(f.PostProcessor) {
		if t.post, err = parsePostProcessor(f.PostProcessor); err != nil {
			return nil, err
		}
	}
	for i, a := range f.AddedTokens {
		if a == nil || a.Content == "" || a.ID < 0 {
			return nil, fmt.Errorf("added_tokens[%d]: missing content or id", i)
		}
	}
	t.finish(f.AddedTokens)
	t.applyConfig(cfg)
	// Without a config, the post-processor's own markers are the best guess.
	if w, ok := t.post.(*wrapProcessor); ok {
		if t.bos < 0 && len(w.before) == 1 {
			t.bos = w.before[0]
		}
		if t.eos < 0 && len(w.after) == 1 {
			t.eos = w.after[0]
		}
	}
	return t, nil
}

func isNull(r json.RawMessage) bool {
	r = bytes.TrimSpace(r)
	return len(r) == 0 || string(r) == "null"
}

func (t *Tokenizer) applyConfig(cfg *configJSON) {
	if cfg == nil {
		return
	}
	if id, ok := t.TokenID(string(cfg.BOSToken)); ok && cfg.BOSToken != "" {
		t.bos = id
	}
	if id, ok := t.TokenID(string(cfg.EOSToken)); ok && cfg.EOSToken != "" {
		t.eos = id
	}
	if cfg.CleanupSpace != nil {
		t.cleanup = *cfg.CleanupSpace
	}
	if rebuildsPostProcessor[cfg.Class] {
		w := &wrapProcessor{}
		if (cfg.AddBOSToken == nil || *cfg.AddBOSToken) && t.bos >= 0 {
			w.before = []int{t.bos}
		}
		if cfg.AddEOSToken != nil && *cfg.AddEOSToken && t.eos >= 0 {
			w.after = []int{t.eos}
		}
		t.post = nil
		if len(w.before)+len(w.after) > 0 {
			t.post = w
		}
		return
	}
	// Otherwise tokenizer.json's post-processor is authoritative; the
	// config flags only matter when it adds nothing.
	if t.post == nil {
		w := &wrapProcessor{}
		if cfg.AddBOSToken != nil && *cfg.AddBOSToken && t.bos >= 0 {
			w.before = []int{t.bos}
		}
		if cfg.AddEOSToken != nil && *cfg.AddEOSToken && t.eos >= 0 {
			w.after = []int{t.eos}
		}
		if len(w.before)+len(w.after) > 0 {
			t.post = w
		}
	}
}

const supportedModels = "BPE"

// maxTokenID bounds ids so a corrupt file cannot make newBPE allocate an
// id table of billions of entries.
const maxTokenID = 1<<24 - 1

// parseModel reads the model section; fields, when not nil, are its
// members already split.
func parseModel(raw json.RawMessage, fields map[string][]byte) (*bpe, error) {
	if fields == nil {
		var err error
		if fields, err = objectFields(raw); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	// Decode the small fields with encoding/json; vocab and merges, the bulk
	// of the file, go to the dedicated scanner.
	var small bytes.Buffer
	small.WriteByte('{')
	for k, v := range fields {
		if k == "vocab" || k == "merges" {
			continue
		}
		if small.Len() > 1 {
			small.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		small.Write(kb)
		small.WriteByte(':')
		small.Write(v)
	}
	small.WriteByte('}')
	var m modelJSON
	if err := json.Unmarshal(small.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if m.Type != "" && m.Type != "BPE" {
		return nil, fmt.Errorf("unsupported model type %q (supported: %s)", m.Type, supportedModels)
	}
	m.Vocab, m.Merges = fields["vocab"], fields["merges"]
	if m.Type == "" && m.Merges != nil {
		m.Type = "BPE" // old files omit the type
	}
	if m.Type != "BPE" {
		return nil, fmt.Errorf("unsupported model type %q (supported: %s)", m.Type, supportedModels)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return nil, fmt.Errorf("model BPE: continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("model BPE: end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	}
	if isNull(m.Vocab) {
		return nil, fmt.Errorf("model BPE: no vocab")
	}
	vocab, err := scanVocab(m.Vocab)
	if err != nil {
		return nil, fmt.Errorf("model BPE: %w", err)
	}
	if vocab.len() == 0 {
		return nil, fmt.Errorf("model BPE: empty vocab")
	}
	b := newBPE(vocab)
	b.fuseUnk, b.byteFallback, b.ignoreMerges = m.FuseUnk, m.ByteFallback, m.IgnoreMerges
	if m.UnkToken != nil {
		id, ok := vocab.get(*m.UnkToken)
		if !ok {
			return nil, fmt.Errorf("model BPE: unk_token %q not in vocab", *m.UnkToken)
		}
		b.unk = id
	}
	if !isNull(m.Merges) {
		// About one merge per token (151k for Qwen2).
		b.merges = make(map[uint64]merge, vocab.len())
		if err := scanMerges(m.Merges, b.addMerge); err != nil {
			return nil, fmt.Errorf("model BPE: %w", err)
		}
	}
	return b, nil
}
