package transcribe

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"hark/mlx/mlxtest"
	"hark/models/whisper"
)

// A large-v3-shaped vocabulary (51866 tokens, 100 languages, 128 mel
// bins): every special id from <|translate|> on moves up by one.
func TestLargeV3Layout(t *testing.T) {
	mlxtest.NoLeaks(t)
	dims := whisper.Dims{NMels: 128, AudioCtx: 1500, AudioState: 64, AudioHead: 4, AudioLayer: 1,
		Vocab: 51866, TextCtx: 448, TextState: 64, TextHead: 4, TextLayer: 1}
	wm, err := randomWhisper(dims, false)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := whisper.TiktokenTokenizer(filepath.Join(mlxtest.Assets(t, "whisper"), "multilingual.tiktoken"), true, dims.NumLanguages())
	if err != nil {
		wm.Close()
		t.Fatal(err)
	}
	m, err := New(wm, tok)
	if err != nil {
		wm.Close()
		t.Fatal(err)
	}
	defer m.Close()
	if tok.NumLanguages != 100 || tok.NoSpeech != 50363 || tok.TimestampBegin != 50365 {
		t.Errorf("languages %d, nospeech %d, timestamp_begin %d", tok.NumLanguages, tok.NoSpeech, tok.TimestampBegin)
	}
	if seq, err := tok.SOTSequence("yue", "translate"); err != nil || !slices.Equal(seq, []int{50258, 50358, 50359}) {
		t.Errorf("yue translate prompt %v, %v", seq, err)
	}
	o := DefaultOptions()
	o.Temperatures, o.SampleLen = []float64{0}, 20
	res, err := m.Transcribe(context.Background(), jfkSamples(t), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.LanguageProbs["yue"]; !ok || len(res.LanguageProbs) != 100 {
		t.Errorf("detection over %d languages", len(res.LanguageProbs))
	}
	for _, s := range res.Segments {
		for _, id := range s.Tokens {
			if id == tok.NoSpeech || id == tok.SOT || id == tok.Transcribe {
				t.Errorf("suppressed token %d sampled", id)
			}
		}
	}
}
