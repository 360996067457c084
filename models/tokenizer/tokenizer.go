package tokenizer

import (
	"context"
	"fmt"
	"strings"
)

// Tokenizer encodes text to token ids and back. It is safe for concurrent
// use.
type Tokenizer struct {
	model     *bpe
	addedByID map[int]*AddedToken
	addedID   map[string]int
	rawAdded  *addedMatcher // added tokens matched on the raw input
	normAdded *addedMatcher // normalized=true tokens, matched after normalizing
	norm      normalizer
	pre       preTokenizer
	dec       decoder
	post      postProcessor
	bos, eos  int
	cleanup   bool
	vocabSize int
	byteLevel bool // the decoder maps tokens to bytes with ByteLevel (see TokenBytes)
}

// Encode turns text into ids. Added and special tokens written literally in
// the text are always recognised (HF's default); addSpecial additionally
// applies the post-processor, e.g. a leading BOS.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int {
	ids, _ := t.EncodeContext(context.Background(), text, addSpecial)
	return ids
}

// EncodeContext is Encode that gives up when ctx is cancelled: a prompt of
// many megabytes takes seconds, and a stopped reply must not wait for it.
func (t *Tokenizer) EncodeContext(ctx context.Context, text string, addSpecial bool) ([]int, error) {
	ids, err := t.encode(ctx, text, true)
	if err != nil {
		return nil, err
	}
	if addSpecial && t.post != nil {
		ids = t.post.process(ids)
	}
	return ids, nil
}

// EncodeOrdinary encodes text as plain text: "<|endoftext|>" typed by a user
// becomes ordinary pieces, not the special id (tiktoken's encode_ordinary).
// No post-processing is applied.
func (t *Tokenizer) EncodeOrdinary(text string) []int {
	ids, _ := t.encode(context.Background(), text, false)
	return ids
}

// cancelEvery is how many pre-tokenized pieces pass between looks at the
// context: a few hundred microseconds of work.
const cancelEvery = 256

func (t *Tokenizer) encode(ctx context.Context, text string, matchAdded bool) ([]int, error) {
	ids := make([]int, 0, len(text)/3+4)
	raw, normed := t.rawAdded, t.normAdded
	if !matchAdded {
		raw, normed = nil, nil
	}
	for _, seg := range raw.split(text, 0, nil) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		s := seg.text
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		for _, sub := range normed.split(s, 0, nil) {
			if sub.id >= 0 {
				ids = append(ids, sub.id)
				continue
			}
			pieces := []piece{{s: sub.text, first: seg.start == 0 && sub.start == 0}}
			if t.pre != nil {
				pieces = t.pre.preTokenize(pieces)
			}
			for i, p := range pieces {
				if i%cancelEvery == cancelEvery-1 && ctx.Err() != nil {
					return nil, fmt.Errorf("tokenize: %w", ctx.Err())
				}
				ids = t.model.tokenize(ids, p.s)
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tokenize: %w", ctx.Err())
		}
	}
	return ids, nil
}

// tokens maps ids to their token strings, dropping special tokens when asked
// and ids outside the vocabulary.
func (t *Tokenizer) tokens(ids []int, skipSpecial bool) []string {
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if a, ok := t.addedByID[id]; ok {
			if skipSpecial && a.Special {
				continue
			}
			toks = append(toks, a.Content)
			continue
		}
		if id >= 0 && id < len(t.model.tokens) && t.model.tokens[id] != "" {
			toks = append(toks, t.model.tokens[id])
		}
	}
	return toks
}

// Decode turns ids back into text. Invalid UTF-8 (a partial character cut by
// the end of ids) becomes U+FFFD; use a Stream to decode incrementally.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	toks := t.tokens(ids, skipSpecial)
	if t.dec == nil {
		return strings.Join(toks, " ")
	}
	return strings.Join(t.dec.decodeChain(toks), "")
}

// BOS returns the beginning-of-sequence id, or -1 when there is none.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS returns the end-of-sequence id, or -1 when there is none.
func (t *Tokenizer) EOS() int { return t.eos }

// TokenID looks a token string up (added tokens first).
func (t *Tokenizer) TokenID(s string) (int, bool) {
	if id, ok := t.addedID[s]; ok {
		return id, true
	}
	return t.model.vocab.get(s)
}

// Token returns the token string of id, or "" when id is unknown.
func (t *Tokenizer) Token(id int) string {
	if a, ok := t.addedByID[id]; ok {
		return a.Content
	}
	if id >= 0 && id < len(t.model.tokens) {
		return t.model.tokens[id]
	}
	return ""
}

// IsSpecial reports whether id is a special added token (BOS, EOS, chat
// markers), which chat UIs usually hide.
func (t *Tokenizer) IsSpecial(id int) bool {
	a, ok := t.addedByID[id]
	return ok && a.Special
}

// VocabSize is one more than the largest id, counting added tokens.
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// CleanUpSpaces reports tokenizer_config.json's clean_up_tokenization_spaces;
// callers that want transformers' exact decode apply CleanUpTokenization.
func (t *Tokenizer) CleanUpSpaces() bool { return t.cleanup }

// CleanUpTokenization removes the spaces before punctuation and English
// contractions that transformers strips when clean_up_tokenization_spaces
// is set (a legacy of word-level tokenizers).
func CleanUpTokenization(s string) string {
	// Sequential replacements, in transformers' order: one pass with a
	// strings.Replacer could differ where replacements create new matches.
	for i := 0; i < len(cleanupPairs); i += 2 {
		s = strings.ReplaceAll(s, cleanupPairs[i], cleanupPairs[i+1])
	}
	return s
}

var cleanupPairs = []string{
	" .", ".", " ?", "?", " !", "!", " ,", ",", " ' ", "'",
	" n't", "n't", " 'm", "'m", " 's", "'s", " 've", "'ve", " 're", "'re",
}

func (t *Tokenizer) finish(added []*AddedToken) {
	t.addedByID = map[int]*AddedToken{}
	t.addedID = map[string]int{}
	var raw, normed []*AddedToken
	t.vocabSize = len(t.model.tokens)
	for _, a := range added {
		t.addedByID[a.ID] = a
		t.addedID[a.Content] = a.ID
		if a.ID+1 > t.vocabSize {
			t.vocabSize = a.ID + 1
		}
		if a.Normalized && t.norm != nil {
			// Matched against normalized text, so normalize the pattern too.
			c := *a
			c.Content = t.norm.normalize(a.Content)
			normed = append(normed, &c)
		} else {
			raw = append(raw, a)
		}
	}
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(normed)
}
