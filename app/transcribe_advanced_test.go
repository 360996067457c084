package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"hark/mlx/mlxtest"
)

// TestQueueAdvancedOptionsAndRetries runs real files through the queue:
// advanced options arrive over HTTP (JSON and upload query), a fallback
// retry shows as a note and moves the bar, and the second file finds the
// model loaded by the first.
func TestQueueAdvancedOptionsAndRetries(t *testing.T) {
	a, srv := speechApp(t)
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	// Drained as it comes: a full subscriber channel drops events.
	ch, stop := a.Events.Subscribe()
	var events []QueueItem
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range ch {
			if it, ok := ev.Data.(QueueItem); ok && ev.Topic == "transcribe-queue" {
				events = append(events, it)
			}
		}
	}()

	// Bad knobs are refused by name, over both routes.
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/upload?name=a.wav&temperatures=0,0.9,0.2", "x", nil); code != 400 || !strings.Contains(body, "must rise") {
		t.Errorf("bad schedule: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/upload?name=a.wav&logprobThreshold=high", "x", nil); code != 400 || !strings.Contains(body, "logprobThreshold") {
		t.Errorf("bad threshold: %d %s", code, body)
	}
	bad, _ := json.Marshal(EnqueueRequest{Paths: []string{jfk}, Options: TranscribeOptions{NoSpeechThreshold: ptr(7.0)}})
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/queue", string(bad), nil); code != 400 || !strings.Contains(body, "no-speech") {
		t.Errorf("bad no-speech threshold: %d %s", code, body)
	}

	// A random model's text is improbable, so the window is retried at 0.4.
	opt := TranscribeOptions{Model: speechRepo, Language: "en", Temperatures: []float64{0, 0.4},
		LogprobThreshold: ptr(-1.0), InitialPrompt: "Ask not."}
	body, _ := json.Marshal(EnqueueRequest{Paths: []string{jfk}, Options: opt})
	code, resp := do(t, "POST", srv.URL+"/api/transcribe/queue", string(body), nil)
	if code != 200 {
		t.Fatalf("enqueue: %d %s", code, resp)
	}
	b, err := os.ReadFile(jfk)
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/api/transcribe/upload?name=second.wav&model=" + speechRepo + "&language=en&noFallback=1&noSpeechThreshold=0.5&initialPrompt=Hello"
	res, err := http.Post(url, "application/octet-stream", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var up QueueItem
	json.NewDecoder(res.Body).Decode(&up)
	res.Body.Close()
	if res.StatusCode != 200 || up.Options.NoSpeechThreshold == nil || *up.Options.NoSpeechThreshold != 0.5 || up.Options.InitialPrompt != "Hello" {
		t.Fatalf("upload options: %d %+v", res.StatusCode, up.Options)
	}

	got := waitFinished(t, a, 3*time.Minute)
	first, second := got["jfk.wav"], got["second.wav"]
	if first.State != "done" || second.State != "done" {
		t.Fatalf("entries: %+v / %+v", first, second)
	}
	if !slices.Equal(first.Options.Temperatures, []float64{0, 0.4}) || first.Options.InitialPrompt != "Ask not." {
		t.Errorf("options not kept with the entry: %+v", first.Options)
	}
	if !first.LoadedModel || second.LoadedModel {
		t.Errorf("model loads: first %v, second %v; want the second to reuse the first's", first.LoadedModel, second.LoadedModel)
	}

	var notes []string
	var retryDoneAt float64 = -1
	stop()
	<-drained
	for _, it := range events {
		if it.ID != first.ID || it.Note == "" {
			continue
		}
		notes = append(notes, it.Note)
		if retryDoneAt < 0 {
			retryDoneAt = it.Done
		}
	}
	if !slices.Contains(notes, "Retrying window 1 at temperature 0.4") {
		t.Errorf("notes %q; want the retry of window 1", notes)
	}
	// Retry 2 of 2 over the 11 s window: the bar is at half of it.
	if retryDoneAt < 5 || retryDoneAt > 6 {
		t.Errorf("bar at %v s during the retry; want about 5.5", retryDoneAt)
	}
}
