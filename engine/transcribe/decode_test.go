package transcribe

import (
	"context"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hark/engine/mel"
	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/models/whisper"
)

// goldenModelAndAudio opens golden/model and encodes the floor-padded jfk
// mel the model_io goldens were made from.
func goldenModelAndAudio(t *testing.T) (*Model, *whisper.Cross) {
	t.Helper()
	golden := mlxtest.Assets(t, "whisper", "golden")
	m, err := Open(filepath.Join(golden, "model"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(golden, "mel", "jfk_wav.mel80_pad3000.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := mel.ReadNPY(f)
	if err != nil {
		t.Fatal(err)
	}
	x := mlx.FromSlice(a.Data, a.Shape...)
	defer x.Free()
	feats, err := m.Whisper.Encode(x)
	if err != nil {
		t.Fatal(err)
	}
	defer feats.Free()
	audio, err := m.Whisper.CrossAttention(feats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audio.Close(); m.Close() })
	return m, audio
}

func TestGreedyDecodesMatchGolden(t *testing.T) {
	mlxtest.NoLeaks(t)
	m, audio := goldenModelAndAudio(t)
	var raw map[string]json.RawMessage
	readJSONFile(t, filepath.Join(mlxtest.Assets(t, "whisper", "golden"), "model_io", "greedy_decode.json"), &raw)
	type goldenGreedy struct {
		Generated     []int   `json:"generated"`
		SumLogprob    float64 `json:"sum_logprob"`
		OpenAIAvg     float64 `json:"openai_avg_logprob"`
		OpenAINoSpeec float64 `json:"openai_no_speech_prob"`
	}
	base := decodeOptions{language: "en", task: "transcribe", sampleLen: 40, maxInitialTimestamp: 1}
	cases := map[string]func(o *decodeOptions){
		// ApplyTimestampRules alone
		"greedy_timestamp_rules_only": func(o *decodeOptions) {},
		// OpenAI's default filters: blank, the default suppress set, timestamps
		"greedy_openai_defaults_timestamps": func(o *decodeOptions) {
			o.suppressBlank = true
			o.suppressTokens = suppressSet(m.Tokenizer, nil)
		},
		"greedy_openai_defaults_without_timestamps": func(o *decodeOptions) {
			o.suppressBlank = true
			o.suppressTokens = suppressSet(m.Tokenizer, nil)
			o.withoutTimestamps = true
		},
	}
	for name, edit := range cases {
		var want goldenGreedy
		if err := json.Unmarshal(raw[name], &want); err != nil {
			t.Fatal(err)
		}
		if len(want.Generated) != 40 {
			t.Fatalf("%s: golden has %d tokens", name, len(want.Generated))
		}
		o := base
		edit(&o)
		res, err := m.decodeWindow(context.Background(), audio, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.tokens, want.Generated) {
			t.Errorf("%s:\n got %v\nwant %v", name, res.tokens, want.Generated)
		}
		if math.Abs(res.sumLogprob-want.SumLogprob) > 1e-3 {
			t.Errorf("%s: sum_logprob %v, want %v", name, res.sumLogprob, want.SumLogprob)
		}
		if want.OpenAIAvg != 0 && math.Abs(res.avgLogprob-want.OpenAIAvg) > 1e-4 {
			t.Errorf("%s: avg_logprob %v, want %v", name, res.avgLogprob, want.OpenAIAvg)
		}
		if want.OpenAINoSpeec != 0 && math.Abs(res.noSpeechProb-want.OpenAINoSpeec) > 1e-7 {
			t.Errorf("%s: no_speech_prob %v, want %v", name, res.noSpeechProb, want.OpenAINoSpeec)
		}
	}
	if got := suppressSet(m.Tokenizer, nil); len(got) != 88 {
		t.Errorf("default suppress set has %d ids, want 88", len(got))
	}
}

// rescore replays tokens through a fresh decoder with the same filters and
// sums log_softmax(filtered logits) of each sampled token.
func rescore(t *testing.T, m *Model, audio *whisper.Cross, o decodeOptions, sampled []int) float64 {
	t.Helper()
	initial, err := m.initialTokens(o)
	if err != nil {
		t.Fatal(err)
	}
	filters := m.logitFilters(o, len(initial))
	dec, err := m.Whisper.NewDecoderOver(audio, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	seq := slices.Clone(initial)
	feed := initial
	var sum float32
	for _, tk := range sampled {
		logits, _, err := m.stepLogits(dec, [][]int{feed}, false, -1, new([]float32))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range filters {
			f.apply(logits, [][]int{seq})
		}
		sum += float32(float64(logits[0][tk]) - logSumExp(logits[0]))
		seq = append(seq, tk)
		feed = []int{tk}
	}
	return float64(sum)
}

func TestBeamSearch(t *testing.T) {
	mlxtest.NoLeaks(t)
	m, audio := goldenModelAndAudio(t)
	o := decodeOptions{language: "en", task: "transcribe", sampleLen: 30, maxInitialTimestamp: 1,
		suppressBlank: true, suppressTokens: suppressSet(m.Tokenizer, nil), patience: 1}
	greedy, err := m.decodeWindow(context.Background(), audio, o)
	if err != nil {
		t.Fatal(err)
	}
	// One beam keeps the best non-final candidate each step: greedy, as
	// long as end-of-text never wins (it does not with this model).
	o.beamSize = 1
	one, err := m.decodeWindow(context.Background(), audio, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one.tokens, greedy.tokens) {
		t.Errorf("beam 1:\n got %v\nwant %v", one.tokens, greedy.tokens)
	}
	o.beamSize = 5
	five, err := m.decodeWindow(context.Background(), audio, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(five.tokens) != 30 {
		t.Fatalf("beam 5 returned %d tokens", len(five.tokens))
	}
	// The reported score must be the score of the returned tokens: this
	// fails if the KV cache is not reordered with the beams.
	if got := rescore(t, m, audio, o, five.tokens); math.Abs(got-five.sumLogprob) > 1e-3 {
		t.Errorf("beam 5 reports sum_logprob %v, the tokens score %v", five.sumLogprob, got)
	}
	// Under the timestamp rules the filtered distribution depends on the
	// path, so beam search can end below greedy. Without them, keeping five
	// hypotheses finds a sequence at least as likely as greedy's here.
	o.withoutTimestamps, o.beamSize = true, 0
	greedyText, err := m.decodeWindow(context.Background(), audio, o)
	if err != nil {
		t.Fatal(err)
	}
	o.beamSize = 5
	beamText, err := m.decodeWindow(context.Background(), audio, o)
	if err != nil {
		t.Fatal(err)
	}
	if beamText.sumLogprob < greedyText.sumLogprob {
		t.Errorf("beam 5 without timestamps scored %v, greedy %v", beamText.sumLogprob, greedyText.sumLogprob)
	}
	if got := rescore(t, m, audio, o, beamText.tokens); math.Abs(got-beamText.sumLogprob) > 1e-3 {
		t.Errorf("beam 5 (no timestamps) reports %v, the tokens score %v", beamText.sumLogprob, got)
	}
}

func TestTopK(t *testing.T) {
	v := []float64{0.1, 3, math.Inf(-1), 3, -2, 7, 0.5}
	if got := topK(v, 3); !slices.Equal(got, []int{5, 1, 3}) {
		t.Errorf("topK = %v", got)
	}
	rng := rand.New(rand.NewSource(3))
	for range 100 {
		x := make([]float64, 50)
		for i := range x {
			x[i] = float64(rng.Intn(10))
		}
		k := 1 + rng.Intn(6)
		got := topK(x, k)
		idx := make([]int, len(x))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return -cmpF(x[a], x[b]) })
		if !slices.Equal(got, idx[:k]) {
			t.Fatalf("topK(%v, %d) = %v, want %v", x, k, got, idx[:k])
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
