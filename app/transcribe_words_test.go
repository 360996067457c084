package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"hark/engine/transcribe"
	"hark/library/store"
)

// A transcript saved with words exports them: in JSON always, as one
// SRT/VTT cue per word or karaoke VTT on request; bad layouts are 400s.
func TestExportWordCues(t *testing.T) {
	a, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	segs, _ := json.Marshal([]transcribe.Segment{{
		StartSec: 0.5, EndSec: 2, Text: " Ask not", Tokens: []int{1, 2},
		Words:         []transcribe.Word{{Word: " Ask", StartSec: 0.5, EndSec: 1, Probability: 0.9}, {Word: " not", StartSec: 1, EndSec: 2, Probability: 0.8}},
		SkippedBefore: &transcribe.Gap{Start: 0, End: 0.5},
	}})
	tr, err := a.DB.SaveTranscript(context.Background(), store.Transcript{SourcePath: "/x/talk.wav", SourceName: "talk.wav", Language: "en", Duration: 2 * time.Second, Text: "Ask not", Segments: segs})
	if err != nil {
		t.Fatal(err)
	}
	base := srv.URL + "/api/transcripts/" + itoa(tr.ID) + "/export/"
	cases := map[string]string{
		"srt?words=word":    "1\n00:00:00,500 --> 00:00:01,000\nAsk\n\n2\n00:00:01,000 --> 00:00:02,000\nnot\n\n",
		"vtt?words=karaoke": "WEBVTT\n\n00:00.500 --> 00:02.000\n<c>Ask</c><00:00:01.000><c> not</c>\n\n",
		"srt":               "1\n00:00:00,500 --> 00:00:02,000\nAsk not\n\n",
	}
	for q, want := range cases {
		if code, got := do(t, "GET", base+q, "", nil); code != 200 || got != want {
			t.Errorf("%s: %d %q, want %q", q, code, got, want)
		}
	}
	if code, js := do(t, "GET", base+"json", "", nil); code != 200 || !strings.Contains(js, `"words":[{"word":" Ask"`) || !strings.Contains(js, `"skipped_before":{"start":0,"end":0.5}`) {
		t.Errorf("json %d %s", code, js)
	}
	for _, q := range []string{"srt?words=karaoke", "vtt?words=syllable"} {
		if code, _ := do(t, "GET", base+q, "", nil); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
}
