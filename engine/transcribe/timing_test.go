package transcribe

import (
	"context"
	"slices"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

func TestDTWFollowsCheapPath(t *testing.T) {
	// Three tokens over six frames; each token is cheap on two frames.
	x := []float64{
		0, 0, 9, 9, 9, 9,
		9, 9, 0, 0, 9, 9,
		9, 9, 9, 9, 0, 0,
	}
	rows, cols := dtw(x, 3, 6)
	if !slices.Equal(rows, []int{0, 0, 1, 1, 2, 2}) || !slices.Equal(cols, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("path rows %v cols %v", rows, cols)
	}
	// More tokens than frames: the path moves down without advancing time.
	rows, cols = dtw([]float64{0, 5, 0, 5, 5, 0}, 3, 2)
	if !slices.Equal(rows, []int{0, 1, 2}) || !slices.Equal(cols, []int{0, 0, 1}) {
		t.Errorf("tall path rows %v cols %v", rows, cols)
	}
}

func TestMedianFilterReflects(t *testing.T) {
	x := []float64{1, 9, 2, 8, 3}
	medianFilter(x, 3)
	if !slices.Equal(x, []float64{9, 2, 8, 3, 8}) {
		t.Errorf("median filter = %v", x)
	}
}

func TestWordSplittingAndPunctuation(t *testing.T) {
	m := openGolden(t)
	tok := m.Tokenizer
	ids := append(tok.Encode(` Hello, "world". And so`), tok.EOT)
	words, groups := m.splitToWordTokens(ids, "en")
	// `".` is not one punctuation mark, so it stays with "world".
	want := []string{" Hello", ",", ` "world".`, " And", " so", "<|endoftext|>"}
	if !slices.Equal(words, want) {
		t.Fatalf("words %q, want %q", words, want)
	}
	var n int
	for _, g := range groups {
		n += len(g)
	}
	if n != len(ids) {
		t.Fatalf("groups hold %d tokens of %d", n, len(ids))
	}
	al := make([]wordTiming, len(words)-1)
	for i := range al {
		al[i] = wordTiming{word: words[i], tokens: groups[i]}
	}
	mergePunctuations(al)
	var got []string
	for _, w := range al {
		got = append(got, w.word)
	}
	if want := []string{" Hello,", "", ` "world".`, " And", " so"}; !slices.Equal(got, want) {
		t.Errorf("merged %q, want %q", got, want)
	}
	// Characters split across tokens stay whole in languages without spaces.
	zh := tok.Encode("你好世界")
	words, _ = m.splitToWordTokens(zh, "zh")
	if strings.Join(words, "") != "你好世界" || slices.ContainsFunc(words, func(w string) bool { return strings.ContainsRune(w, '\uFFFD') }) {
		t.Errorf("zh words %q", words)
	}
}

func TestWordTimestamps(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openGolden(t)
	o := DefaultOptions()
	o.Language, o.Temperatures, o.WordTimestamps = "en", []float64{0}, true
	o.SampleLen = 60 // enough for several segments; keeps the test short
	res, err := m.Transcribe(context.Background(), jfkSamples(t), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Words are assigned to segments by token count, so a word the model
	// split across a segment boundary lands in the first segment (as in
	// OpenAI's code); the checks are about time order and coverage.
	nWords := 0
	prevEnd := 0.0
	for _, s := range res.Segments {
		for _, w := range s.Words {
			if strings.TrimSpace(w.Word) == "" || w.EndSec < w.StartSec || w.StartSec < prevEnd-1e-9 || w.Probability < 0 || w.Probability > 1 {
				t.Errorf("word %+v after %v", w, prevEnd)
			}
			prevEnd = w.EndSec
			nWords++
		}
		if len(s.Words) > 0 && (s.StartSec > s.Words[0].StartSec || s.EndSec < s.Words[len(s.Words)-1].EndSec) {
			t.Errorf("segment %v-%v does not cover its words %+v", s.StartSec, s.EndSec, s.Words)
		}
	}
	if nWords == 0 {
		t.Fatal("no words timed")
	}
}
