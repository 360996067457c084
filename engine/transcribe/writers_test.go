package transcribe

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func sampleResult() *Result {
	return &Result{
		Text:     " Hello there. --> General.",
		Language: "en",
		Segments: []Segment{
			{ID: 0, StartSec: 0.9400000000000001, EndSec: 3.5, Text: " Hello there.", Tokens: []int{1, 2}},
			{ID: 1, StartSec: 3.5, EndSec: 3.5, Text: "", Tokens: []int{}},
			{ID: 2, StartSec: 3725.0004, EndSec: 3727.9996, Text: " --> General.", Tokens: []int{3}},
		},
	}
}

func TestWriteFormats(t *testing.T) {
	cases := map[string]string{
		"txt": "Hello there.\n--> General.\n",
		"srt": "1\n00:00:00,940 --> 00:00:03,500\nHello there.\n\n" +
			"2\n01:02:05,000 --> 01:02:08,000\n-> General.\n\n",
		"vtt": "WEBVTT\n\n00:00.940 --> 00:03.500\nHello there.\n\n" +
			"01:02:05.000 --> 01:02:08.000\n-> General.\n\n",
	}
	for format, want := range cases {
		var b bytes.Buffer
		if err := Write(&b, format, sampleResult()); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%s:\n got %q\nwant %q", format, b.String(), want)
		}
	}
	if err := Write(&bytes.Buffer{}, "docx", sampleResult()); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestWriteJSONHasOpenAIShape(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, "json", sampleResult()); err != nil {
		t.Fatal(err)
	}
	// Keys in the order of OpenAI's result and segment dicts.
	s := b.String()
	order := []string{`"text"`, `"segments"`, `"id"`, `"seek"`, `"start"`, `"end"`, `"text"`, `"tokens"`,
		`"temperature"`, `"avg_logprob"`, `"compression_ratio"`, `"no_speech_prob"`, `"language"`}
	at := 0
	for _, k := range order {
		i := strings.Index(s[at:], k)
		if i < 0 {
			t.Fatalf("key %s missing or out of order in %s", k, s)
		}
		at += i
	}
	var back struct {
		Segments []map[string]any `json:"segments"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Segments[0]["start"] != 0.9400000000000001 {
		t.Errorf("start printed as %v, want OpenAI's float", back.Segments[0]["start"])
	}
	if _, ok := back.Segments[0]["words"]; ok {
		t.Error("words present without word timestamps")
	}
}

func TestWindowPrompt(t *testing.T) {
	initial := []int{1, 2}
	all := []int{1, 2, 10, 11, 12, 13}
	if got := windowPrompt(all, initial, 0, 3, false); !slices.Equal(got, all) {
		t.Errorf("conditioned prompt %v", got)
	}
	if got := windowPrompt(all, initial, 4, 3, false); !slices.Equal(got, []int{12, 13}) {
		t.Errorf("after reset %v", got)
	}
	// carry: the initial prompt always, then the latest tokens that fit.
	if got := windowPrompt(all, initial, 0, 3, true); !slices.Equal(got, []int{1, 2, 11, 12, 13}) {
		t.Errorf("carried prompt %v", got)
	}
	if got := windowPrompt(all, initial, 6, 3, true); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("carried prompt after reset %v", got)
	}
}

func wordResult() *Result {
	r := sampleResult()
	r.Segments[0].Words = []Word{
		{Word: " Hello", StartSec: 0.94, EndSec: 1.5, Probability: 0.9},
		{Word: " there.", StartSec: 1.5, EndSec: 3.5, Probability: 0.8},
	}
	return r
}

func TestWriteWordCues(t *testing.T) {
	cases := []struct{ format, words, want string }{
		{"srt", "word", "1\n00:00:00,940 --> 00:00:01,500\nHello\n\n2\n00:00:01,500 --> 00:00:03,500\nthere.\n\n" +
			"3\n01:02:05,000 --> 01:02:08,000\n-> General.\n\n"},
		{"vtt", "word", "WEBVTT\n\n00:00.940 --> 00:01.500\nHello\n\n00:01.500 --> 00:03.500\nthere.\n\n" +
			"01:02:05.000 --> 01:02:08.000\n-> General.\n\n"},
		{"vtt", "karaoke", "WEBVTT\n\n00:00.940 --> 00:03.500\n<c>Hello</c><00:00:01.500><c> there.</c>\n\n" +
			"01:02:05.000 --> 01:02:08.000\n-> General.\n\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := WriteWith(&b, c.format, wordResult(), WriteOptions{Words: c.words}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s/%s:\n got %q\nwant %q", c.format, c.words, b.String(), c.want)
		}
	}
	if err := WriteWith(&bytes.Buffer{}, "srt", wordResult(), WriteOptions{Words: "karaoke"}); err == nil {
		t.Error("karaoke SRT accepted")
	}
	if err := WriteWith(&bytes.Buffer{}, "vtt", wordResult(), WriteOptions{Words: "syllable"}); err == nil {
		t.Error("unknown layout accepted")
	}
	// Words reach the JSON, with OpenAI's keys.
	var b bytes.Buffer
	if err := Write(&b, "json", wordResult()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"words":[{"word":" Hello","start":0.94,"end":1.5,"probability":0.9}`) {
		t.Errorf("json words: %s", b.String())
	}
}
