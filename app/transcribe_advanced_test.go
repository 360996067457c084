package app

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"hark/engine/transcribe"
	"hark/mlx/mlxtest"
)

func TestAdvancedOptionsChecked(t *testing.T) {
	for _, c := range []struct {
		o    TranscribeOptions
		want string
	}{
		{TranscribeOptions{Temperatures: []float64{0.4, 0.2}}, "must rise"},
		{TranscribeOptions{Temperatures: []float64{0, 2}}, "0 to 1"},
		{TranscribeOptions{NoSpeechThreshold: ptr(1.2)}, "no-speech threshold"},
		{TranscribeOptions{LogprobThreshold: ptr(0.5)}, "log probability threshold"},
		{TranscribeOptions{CompressionRatioThreshold: ptr(-1.0)}, "compression ratio threshold"},
		{TranscribeOptions{CompressionRatioThreshold: ptr(math.NaN())}, "not a number"},
		{TranscribeOptions{InitialPrompt: strings.Repeat("word ", 500)}, "initial prompt"},
	} {
		if _, err := c.o.normalize(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v; want %q", c.o, err, c.want)
		}
	}

	// Unset knobs keep OpenAI's defaults; set ones reach the engine.
	o, err := TranscribeOptions{}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	def, got := transcribe.DefaultOptions(), engineOptions(o)
	if !slices.Equal(got.Temperatures, def.Temperatures) || got.NoSpeechThreshold != def.NoSpeechThreshold ||
		got.LogProbThreshold != def.LogProbThreshold || got.CompressionRatioThreshold != def.CompressionRatioThreshold {
		t.Errorf("defaults changed: %+v", got)
	}
	o, err = TranscribeOptions{
		Temperatures: []float64{0, 0.5}, NoSpeechThreshold: ptr(0.3), LogprobThreshold: ptr(-2.0),
		CompressionRatioThreshold: ptr(3.0), InitialPrompt: "  Kubernetes, Grafana.  ", BeamSize: 3,
	}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	got = engineOptions(o)
	if !slices.Equal(got.Temperatures, []float64{0, 0.5}) || got.NoSpeechThreshold != 0.3 || got.LogProbThreshold != -2 ||
		got.CompressionRatioThreshold != 3 || got.InitialPrompt != "Kubernetes, Grafana." || got.BeamSize != 3 {
		t.Errorf("engine options: %+v", got)
	}
	o.NoFallback = true
	if got := engineOptions(o).Temperatures; !slices.Equal(got, []float64{0}) {
		t.Errorf("no fallback: temperatures %v", got)
	}
}

func TestRetryProgressAndETA(t *testing.T) {
	r := transcribe.Retry{Window: 2, Temperature: 0.4, Attempt: 3, Attempts: 6, From: 30 * time.Second, To: 60 * time.Second}
	if got := retryNote(r); got != "Retrying window 2 at temperature 0.4" {
		t.Errorf("note %q", got)
	}
	if got := retryDone(r); got != 40*time.Second {
		t.Errorf("retry 3 of 6 over 30-60 s at %v; want 40s", got)
	}
	// 10 s of audio in 5 s: 2x real time, so 20 s left for 40 s of audio.
	if got := estimateETA(5*time.Second, 10, 50); got != 20 {
		t.Errorf("eta %v; want 20", got)
	}
	if estimateETA(0, 0, 50) != -1 || estimateETA(time.Second, 50, 50) != 0 {
		t.Error("eta unknown at the start, 0 at the end")
	}
}

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
