package whisper

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/profile"
	"hark/models/tokenizer"
)

func multilingualTokenizers(t *testing.T) map[string]*Tokenizer {
	t.Helper()
	assets := mlxtest.Assets(t, "whisper")
	tk, err := TiktokenTokenizer(filepath.Join(assets, "multilingual.tiktoken"), true, 99)
	if err != nil {
		t.Fatal(err)
	}
	dims := Dims{Vocab: 51865}
	hf, err := LoadTokenizer(filepath.Join(assets, "golden", "model"), dims)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Tokenizer{"tiktoken": tk, "tokenizer.json": hf}
}

func TestTokenizerSpecialIDs(t *testing.T) {
	var gen struct {
		Extra struct {
			SOT            int `json:"sot"`
			EOT            int `json:"eot"`
			SOTLM          int `json:"sot_lm"`
			SOTPrev        int `json:"sot_prev"`
			NoSpeech       int `json:"no_speech"`
			NoTimestamps   int `json:"no_timestamps"`
			TimestampBegin int `json:"timestamp_begin"`
		} `json:"_extra_openai_ids"`
		LangToID map[string]int `json:"lang_to_id"`
		TaskToID map[string]int `json:"task_to_id"`
	}
	readJSON(t, filepath.Join(goldenDir(t), "model", "generation_config.json"), &gen)
	for name, tok := range multilingualTokenizers(t) {
		got := []int{tok.SOT, tok.EOT, tok.SOTLM, tok.SOTPrev, tok.NoSpeech, tok.NoTimestamps, tok.TimestampBegin,
			tok.Translate, tok.Transcribe}
		want := []int{gen.Extra.SOT, gen.Extra.EOT, gen.Extra.SOTLM, gen.Extra.SOTPrev, gen.Extra.NoSpeech,
			gen.Extra.NoTimestamps, gen.Extra.TimestampBegin, gen.TaskToID["translate"], gen.TaskToID["transcribe"]}
		if !slices.Equal(got, want) {
			t.Errorf("%s: special ids %v, want %v", name, got, want)
		}
		if len(gen.LangToID) != 99 {
			t.Fatalf("golden lang_to_id has %d entries", len(gen.LangToID))
		}
		for tokStr, id := range gen.LangToID {
			code := tokStr[2 : len(tokStr)-2]
			if got, err := tok.LanguageToken(code); err != nil || got != id {
				t.Errorf("%s: %s -> %d, %v; want %d", name, code, got, err, id)
			}
		}
		seq, err := tok.SOTSequence("en", "translate")
		if err != nil || !slices.Equal(seq, []int{50258, 50259, 50358}) {
			t.Errorf("%s: SOT sequence %v, %v", name, seq, err)
		}
		if _, err := tok.LanguageToken("yue"); err == nil {
			t.Errorf("%s: yue accepted by a 99-language vocabulary", name)
		}
		// Timestamps are dropped by Decode, kept by DecodeWithTimestamps.
		ids := []int{tok.TimestampBegin + 45, 30887, tok.TimestampBegin + 80}
		if s := tok.Decode(ids); s != " infantry" {
			t.Errorf("%s: Decode = %q", name, s)
		}
		if s := tok.DecodeWithTimestamps(ids); s != "<|0.90|> infantry<|1.60|>" {
			t.Errorf("%s: DecodeWithTimestamps = %q", name, s)
		}
		// Special tokens other than timestamps stay literal, as in OpenAI's decode.
		if s := tok.Decode([]int{11508, 50310}); s != " этот<|eu|>" {
			t.Errorf("%s: Decode with a language token = %q", name, s)
		}
	}
}

func TestNonSpeechTokensMatchOpenAI(t *testing.T) {
	var g struct {
		Suppress struct {
			NonSpeech      []int `json:"non_speech_tokens"`
			DefaultSupress []int `json:"default_suppress_tokens"`
		} `json:"suppress"`
	}
	readJSON(t, filepath.Join(goldenDir(t), "model_io", "greedy_decode.json"), &g)
	if len(g.Suppress.NonSpeech) != 82 {
		t.Fatalf("golden has %d non-speech tokens", len(g.Suppress.NonSpeech))
	}
	for name, tok := range multilingualTokenizers(t) {
		if got := tok.NonSpeechTokens(); !slices.Equal(got, g.Suppress.NonSpeech) {
			t.Errorf("%s: non-speech tokens\n got %v\nwant %v", name, got, g.Suppress.NonSpeech)
		}
	}
}

func TestTokenizerEncodeGolden(t *testing.T) {
	f, err := os.Open(filepath.Join(mlxtest.Assets(t, "whisper"), "tokenizer-golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	toks := multilingualTokenizers(t)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Text    string `json:"text"`
			IDs     []int  `json:"ids"`
			Decoded string `json:"decoded"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		for name, tok := range toks {
			if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
				t.Errorf("%s: Encode(%q) = %v, want %v", name, c.Text, got, c.IDs)
			}
			if got := tok.Decode(c.IDs); got != c.Decoded {
				t.Errorf("%s: Decode(%v) = %q, want %q", name, c.IDs, got, c.Decoded)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases", n)
	}
	for name, tok := range toks {
		// transcribe()'s initial prompt encoding (golden/transcribe README).
		if got := tok.Encode(" President Kennedy speech."); !slices.Equal(got, []int{3117, 16517, 6218, 13}) {
			t.Errorf("%s: prompt encodes to %v", name, got)
		}
	}
}

func TestEnglishOnlyTokenizerLayout(t *testing.T) {
	path := filepath.Join(mlxtest.Assets(t, "whisper"), "gpt2.tiktoken")
	dims := Dims{Vocab: 51864}
	tok, err := TiktokenTokenizer(path, dims.Multilingual(), dims.NumLanguages())
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's English-only models: eot 50256, sot 50257, <|notimestamps|>
	// 50362, <|0.00|> 50363, 1501 timestamps up to 51863 = n_vocab-1.
	if tok.EOT != 50256 || tok.SOT != 50257 || tok.NoTimestamps != 50362 || tok.TimestampBegin != 50363 {
		t.Errorf("ids: eot %d sot %d notimestamps %d timestamp_begin %d", tok.EOT, tok.SOT, tok.NoTimestamps, tok.TimestampBegin)
	}
	if tok.TimestampBegin+1500 != dims.Vocab-1 {
		t.Errorf("last timestamp %d, vocab %d", tok.TimestampBegin+1500, dims.Vocab)
	}
	if seq, _ := tok.SOTSequence("en", "transcribe"); !slices.Equal(seq, []int{50257}) {
		t.Errorf("English-only SOT sequence %v", seq)
	}
}

func TestNewTokenizerRejectsForeignVocabulary(t *testing.T) {
	bpe, err := tokenizer.LoadTiktoken(filepath.Join(mlxtest.Assets(t, "whisper"), "multilingual.tiktoken"), SpecialTokens(100))
	if err != nil {
		t.Fatal(err)
	}
	// A 100-language vocabulary read as 99 languages puts <|translate|> on <|yue|>.
	if _, err := NewTokenizer(bpe, true, 99); err == nil {
		t.Fatal("mismatched language count accepted")
	}
	if _, err := NewTokenizer(bpe, true, 100); err != nil {
		t.Fatal(err)
	}
}

func TestProfileRecognisesWhisper(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenDir(t), "model", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	mlxCfg := `{"n_mels":80,"n_audio_ctx":1500,"n_audio_state":384,"n_audio_head":6,"n_audio_layer":4,"n_vocab":51865,` +
		`"n_text_ctx":448,"n_text_state":384,"n_text_head":6,"n_text_layer":4,"model_type":"whisper","quantization":{"group_size":64,"bits":4}}`
	for name, raw := range map[string][]byte{"hf": data, "mlx": []byte(mlxCfg)} {
		c, err := profile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if r := profile.Resolve(c); !r.Supported || r.Family != "whisper" || r.Kind != profile.KindSpeech {
			t.Errorf("%s: %+v", name, r)
		}
	}
	bad, _ := profile.Parse([]byte(`{"model_type":"whisper","d_model":64,"encoder_layers":2,"decoder_layers":2,"encoder_attention_heads":4,` +
		`"decoder_attention_heads":4,"num_mel_bins":80,"max_source_positions":1500,"max_target_positions":448,"vocab_size":51865,"activation_function":"relu"}`))
	if r := profile.Resolve(bad); r.Supported || !strings.Contains(r.Reason, "relu") {
		t.Errorf("relu variant: %+v", r)
	}
}
