package whisper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hark/models/tokenizer"
)

// Tokenizer is Whisper's tokenizer: a byte-level BPE plus special tokens
// laid out after the text vocabulary in a fixed order:
//
//	<|endoftext|> <|startoftranscript|> <|en|> ... <|translate|> <|transcribe|>
//	<|startoflm|> <|startofprev|> <|nospeech|> <|notimestamps|> <|0.00|> ... <|30.00|>
//
// All ids are derived from that order, so the same code serves the
// English-only (gpt2) and multilingual vocabularies and large-v3's extra
// language.
type Tokenizer struct {
	bpe          *tokenizer.Tokenizer
	Multilingual bool
	NumLanguages int

	EOT, SOT, Translate, Transcribe, SOTLM, SOTPrev, NoSpeech, NoTimestamps int
	// TimestampBegin is <|0.00|>; timestamp i (i*0.02 s) is TimestampBegin+i.
	TimestampBegin int
}

// SpecialTokens returns Whisper's special tokens in id order for a vocabulary
// with numLanguages languages, as OpenAI's tokenizer adds them to the
// tiktoken ranks.
func SpecialTokens(numLanguages int) []string {
	s := []string{"<|endoftext|>", "<|startoftranscript|>"}
	for _, l := range Languages[:numLanguages] {
		s = append(s, "<|"+l.Code+"|>")
	}
	s = append(s, "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>")
	for i := 0; i <= 1500; i++ {
		s = append(s, fmt.Sprintf("<|%.2f|>", float64(i)*0.02))
	}
	return s
}

// NewTokenizer wraps a loaded BPE (from tokenizer.json or tiktoken) and
// checks that its special tokens sit where Whisper expects them.
func NewTokenizer(bpe *tokenizer.Tokenizer, multilingual bool, numLanguages int) (*Tokenizer, error) {
	if numLanguages < 0 || numLanguages > len(Languages) {
		return nil, fmt.Errorf("whisper tokenizer: %d languages", numLanguages)
	}
	t := &Tokenizer{bpe: bpe, Multilingual: multilingual, NumLanguages: numLanguages}
	eot, ok := bpe.TokenID("<|endoftext|>")
	if !ok {
		return nil, errors.New("whisper tokenizer: no <|endoftext|> token")
	}
	t.EOT = eot
	t.SOT = eot + 1
	t.Translate = t.SOT + 1 + numLanguages
	t.Transcribe = t.Translate + 1
	t.SOTLM = t.Transcribe + 1
	t.SOTPrev = t.SOTLM + 1
	t.NoSpeech = t.SOTPrev + 1
	t.NoTimestamps = t.NoSpeech + 1
	t.TimestampBegin = t.NoTimestamps + 1
	checks := []struct {
		id    int
		names []string
	}{
		{t.SOT, []string{"<|startoftranscript|>"}},
		{t.Translate, []string{"<|translate|>"}},
		{t.Transcribe, []string{"<|transcribe|>"}},
		{t.SOTLM, []string{"<|startoflm|>"}},
		{t.SOTPrev, []string{"<|startofprev|>"}},
		// older tokenizer.json files call it <|nocaptions|>
		{t.NoSpeech, []string{"<|nospeech|>", "<|nocaptions|>"}},
		{t.NoTimestamps, []string{"<|notimestamps|>"}},
	}
	for i, l := range Languages[:numLanguages] {
		checks = append(checks, struct {
			id    int
			names []string
		}{t.SOT + 1 + i, []string{"<|" + l.Code + "|>"}})
	}
	for _, c := range checks {
		if got := bpe.Token(c.id); !slices.Contains(c.names, got) {
			return nil, fmt.Errorf("whisper tokenizer: id %d is %q, want %s (vocabulary of another model?)", c.id, got, c.names[0])
		}
	}
	return t, nil
}

// LoadTokenizer finds the tokenizer of a model folder: its tokenizer.json,
// else a tiktoken rank file (multilingual.tiktoken or gpt2.tiktoken) in the
// folder or in one of extraDirs, with the special tokens added in code.
// mlx-community checkpoints ship no tokenizer, hence the fallback.
func LoadTokenizer(dir string, dims Dims, extraDirs ...string) (*Tokenizer, error) {
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		bpe, err := tokenizer.Load(dir)
		if err != nil {
			return nil, err
		}
		return NewTokenizer(bpe, dims.Multilingual(), dims.NumLanguages())
	}
	name := "gpt2.tiktoken"
	if dims.Multilingual() {
		name = "multilingual.tiktoken"
	}
	for _, d := range append([]string{dir}, extraDirs...) {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return TiktokenTokenizer(p, dims.Multilingual(), dims.NumLanguages())
		}
	}
	return nil, fmt.Errorf("whisper: %s has no tokenizer.json and no %s was found (looked in %s)",
		dir, name, strings.Join(append([]string{dir}, extraDirs...), ", "))
}

// TiktokenTokenizer builds the tokenizer from OpenAI's rank file.
func TiktokenTokenizer(path string, multilingual bool, numLanguages int) (*Tokenizer, error) {
	if numLanguages < 0 || numLanguages > len(Languages) {
		return nil, fmt.Errorf("whisper tokenizer: %d languages", numLanguages)
	}
	bpe, err := tokenizer.LoadTiktoken(path, SpecialTokens(numLanguages))
	if err != nil {
		return nil, err
	}
	return NewTokenizer(bpe, multilingual, numLanguages)
}

// Encode turns text into ids without special tokens.
func (t *Tokenizer) Encode(text string) []int { return t.bpe.Encode(text, false) }

// Decode turns ids into text. Timestamp tokens are dropped; other special
// tokens appear literally (OpenAI's Tokenizer.decode).
func (t *Tokenizer) Decode(ids []int) string {
	keep := make([]int, 0, len(ids))
	for _, id := range ids {
		if id < t.TimestampBegin {
			keep = append(keep, id)
		}
	}
	return t.bpe.Decode(keep, false)
}

// DecodeText decodes only the text tokens (ids below <|endoftext|>), as a
// segment's text is built.
func (t *Tokenizer) DecodeText(ids []int) string {
	keep := make([]int, 0, len(ids))
	for _, id := range ids {
		if id < t.EOT {
			keep = append(keep, id)
		}
	}
	return t.bpe.Decode(keep, false)
}

// DecodeWithTimestamps renders timestamps as <|1.08|> (for debugging).
func (t *Tokenizer) DecodeWithTimestamps(ids []int) string {
	var b strings.Builder
	var run []int
	flush := func() {
		b.WriteString(t.bpe.Decode(run, false))
		run = run[:0]
	}
	for _, id := range ids {
		if id >= t.TimestampBegin {
			flush()
			fmt.Fprintf(&b, "<|%.2f|>", float64(id-t.TimestampBegin)*0.02)
			continue
		}
		run = append(run, id)
	}
	flush()
	return b.String()
}

// TokenText is the decoded text of one token.
func (t *Tokenizer) TokenText(id int) string { return t.bpe.Decode([]int{id}, false) }

// LanguageToken returns the id of <|code|>.
func (t *Tokenizer) LanguageToken(code string) (int, error) {
	for i, l := range Languages[:t.NumLanguages] {
		if l.Code == code {
			return t.SOT + 1 + i, nil
		}
	}
	return 0, fmt.Errorf("whisper: language %q is not supported by this model", code)
}

// LanguageTokens are the ids of all language tokens in token order, with
// their codes.
func (t *Tokenizer) LanguageTokens() ([]int, []string) {
	ids := make([]int, t.NumLanguages)
	codes := make([]string, t.NumLanguages)
	for i := range ids {
		ids[i] = t.SOT + 1 + i
		codes[i] = Languages[i].Code
	}
	return ids, codes
}

// SOTSequence is the decoder prompt <|startoftranscript|> [<|lang|>
// <|task|>]. English-only models take no language or task tokens.
func (t *Tokenizer) SOTSequence(language, task string) ([]int, error) {
	seq := []int{t.SOT}
	if !t.Multilingual {
		return seq, nil
	}
	if language == "" {
		language = "en"
	}
	lt, err := t.LanguageToken(language)
	if err != nil {
		return nil, err
	}
	seq = append(seq, lt)
	switch task {
	case "", "transcribe":
		seq = append(seq, t.Transcribe)
	case "translate":
		seq = append(seq, t.Translate)
	default:
		return nil, fmt.Errorf("whisper: unknown task %q (transcribe or translate)", task)
	}
	return seq, nil
}

// NonSpeechTokens are the ids OpenAI suppresses so the model does not emit
// speaker tags or sound descriptions: single-token renderings of symbols
// such as "(" or "[[", with and without a leading space, plus the first
// token of musical-note characters, " -" and " '".
func (t *Tokenizer) NonSpeechTokens() []int {
	symbols := strings.Split(`" # ( ) * + / : ; < = > @ [ \ ] ^ _ `+"`"+` { | } ~ 「 」 『 』`, " ")
	symbols = append(symbols, strings.Fields(`<< >> <<< >>> -- --- -( -[ (' (" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪`)...)
	misc := []string{"♩", "♪", "♫", "♬", "♭", "♮", "♯"}
	set := map[int]bool{}
	for _, s := range []string{" -", " '"} {
		if ids := t.Encode(s); len(ids) > 0 {
			set[ids[0]] = true
		}
	}
	add := func(sym string, always bool) {
		for _, ids := range [][]int{t.Encode(sym), t.Encode(" " + sym)} {
			if len(ids) == 1 || (always && len(ids) > 0) {
				set[ids[0]] = true
			}
		}
	}
	for _, s := range symbols {
		add(s, false)
	}
	for _, s := range misc {
		add(s, true)
	}
	out := make([]int, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
