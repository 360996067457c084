package app

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"hark/app/transcription"
	"hark/library/store"
	"hark/mlx/mlxtest"
)

const speechRepo = "hark-test/whisper-tiny-random"

// speechCache returns a new HF cache holding the tiny random Whisper from
// the shared assets as speechRepo (it transcribes gibberish through the
// real pipeline).
func speechCache(t testing.TB) string {
	t.Helper()
	dir := mlxtest.Assets(t, "whisper", "golden", "model")
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	cache := t.TempDir()
	putSnapshot(t, cache, speechRepo, files)
	return cache
}

// speechApp runs an App whose HF cache is a speechCache.
func speechApp(t testing.TB) (*App, *httptest.Server) {
	t.Helper()
	t.Setenv("HF_HUB_CACHE", speechCache(t))
	a, err := New(Options{DataDir: t.TempDir(), NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); a.Close() })
	if _, err := a.Service.RescanModels(); err != nil {
		t.Fatal(err)
	}
	return a, srv
}

// fast options: greedy, no temperature fallback, English (no detection),
// so the random model takes one pass per window.
var fast = TranscribeOptions{Model: speechRepo, Language: "en", NoFallback: true}

// waitFinished polls the queue until every entry has finished.
func waitFinished(t *testing.T, a *App, timeout time.Duration) map[string]QueueItem {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		items, _ := a.Service.TranscriptionQueue()
		out := map[string]QueueItem{}
		all := true
		for _, it := range items {
			out[it.Name] = it
			all = all && it.Finished()
		}
		if all {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue not finished after %s: %+v", timeout, items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wav builds a RIFF/WAVE file with the given fmt fields and data bytes.
func wav(tag, channels uint16, rate uint32, bits uint16, data []byte) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	align := channels * bits / 8
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+len(data)))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, uint32(16))
	for _, v := range []any{tag, channels, rate, rate * uint32(align), align, bits} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every kind of bad input fails with its own clear message, and a good
// file queued after all of them is still transcribed and exported.
func TestTranscribeQueueBadInputAndExport(t *testing.T) {
	a, srv := speechApp(t)
	dir := t.TempDir()
	mp3, err := os.ReadFile(mlxtest.Assets(t, "audio", "jfk.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		writeFile(t, dir, "notes.wav", []byte("Meeting notes, not a recording.\n")): "Not an audio file",
		writeFile(t, dir, "stub.mp3", mp3[:70]):                                     "cut off",
		writeFile(t, dir, "half.mp3", mp3[:len(mp3)/2+17]):                          "cut off",
		writeFile(t, dir, "empty.wav", nil):                                         "empty (0 bytes)",
		writeFile(t, dir, "silent.wav", wav(1, 1, 16000, 16, nil)):                  "holds no audio",
		writeFile(t, dir, "absurd.wav", wav(1, 0, 0, 16, make([]byte, 64))):         "header is broken (header says 0 channels)",
		writeFile(t, dir, "adpcm.wav", wav(2, 1, 16000, 4, make([]byte, 64))):       "format tag 0x0002",
		filepath.Join(dir, "gone.wav"):                                              "not there any more",
		dir:                                                                         "folder",
	}
	var paths []string
	for p := range bad {
		paths = append(paths, p)
	}
	if _, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: paths, Options: fast}); err != nil {
		t.Fatal(err)
	}
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	missing := fast
	missing.Model = "nobody/no-such-whisper"
	if _, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk}, Options: missing}); err != nil {
		t.Fatal(err)
	}
	// The good file goes last: the queue must go on past every failure.
	code, body := postJSON(t, srv.URL+"/api/transcribe/queue", `{"paths":["`+jfk+`"],"options":{"model":"`+speechRepo+`","language":"en","noFallback":true}}`, nil)
	if code != 200 {
		t.Fatalf("enqueue: %d %s", code, body)
	}

	items, _ := a.Service.TranscriptionQueue()
	if len(items) != len(bad)+2 {
		t.Fatalf("%d entries, want %d", len(items), len(bad)+2)
	}
	waitFinished(t, a, 3*time.Minute)
	items, _ = a.Service.TranscriptionQueue()
	var done QueueItem
	for i, it := range items {
		switch {
		case i < len(bad):
			t.Logf("%s: %s", it.Name, it.Error)
			want := bad[it.Path]
			if it.State != "failed" || !strings.Contains(it.Error, want) {
				t.Errorf("%s: %s %q; want failed with %q", it.Name, it.State, it.Error, want)
			}
			if strings.Contains(it.Error, dir+"/") {
				t.Errorf("%s: error repeats the path: %q", it.Name, it.Error)
			}
		case i == len(bad):
			if it.State != "failed" || !strings.Contains(it.Error, "not in your Library") {
				t.Errorf("missing model: %s %q", it.State, it.Error)
			}
		default:
			done = it
		}
	}
	if done.State != "done" || done.TranscriptID == 0 || done.Total < 10.9 || done.Done != done.Total || done.ETA != 0 {
		t.Fatalf("jfk: %+v", done)
	}

	tr, err := a.Service.GetTranscript(done.TranscriptID)
	if err != nil {
		t.Fatal(err)
	}
	if tr.SourcePath != jfk || tr.SourceName != "jfk.wav" || tr.Language != "en" || tr.Duration != 11*time.Second || !strings.Contains(tr.Model, speechRepo) {
		t.Errorf("transcript: %+v", tr)
	}
	var segs []map[string]any
	if err := json.Unmarshal(tr.Segments, &segs); err != nil || len(segs) == 0 {
		t.Fatalf("segments %s: %v", tr.Segments, err)
	}

	base := srv.URL + "/api/transcripts/" + itoa(tr.ID)
	res, err := http.Get(base + "/export/srt")
	if err != nil {
		t.Fatal(err)
	}
	srt, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}$`).Match(srt) {
		t.Errorf("srt %d:\n%s", res.StatusCode, srt)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.Contains(cd, `filename="jfk.srt"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if code, vtt := do(t, "GET", base+"/export/vtt", "", nil); code != 200 || !strings.HasPrefix(vtt, "WEBVTT\n\n") {
		t.Errorf("vtt %d %q", code, vtt)
	}
	if code, js := do(t, "GET", base+"/export/json", "", nil); code != 200 || !json.Valid([]byte(js)) || !strings.Contains(js, `"segments"`) {
		t.Errorf("json %d %q", code, js)
	}
	if code, _ := do(t, "GET", base+"/export/docx", "", nil); code != 400 {
		t.Errorf("unknown format: %d", code)
	}

	// Playback: ranges work and the type is audio.
	code, part := do(t, "GET", base+"/audio", "", map[string]string{"Range": "bytes=0-99"})
	if code != http.StatusPartialContent || len(part) != 100 || !strings.HasPrefix(part, "RIFF") {
		t.Errorf("range: %d, %d bytes", code, len(part))
	}
	if code, _ := do(t, "GET", srv.URL+"/api/transcripts/999/audio", "", nil); code != 404 {
		t.Errorf("no such transcript: %d", code)
	}

	// Finished entries can be cleared; a finished one cannot be cancelled.
	if err := a.Service.CancelTranscription(done.ID); statusOf(err) != http.StatusConflict {
		t.Errorf("cancel finished: %v", err)
	}
	if left, _ := a.Service.ClearTranscriptionQueue(); len(left) != 0 {
		t.Errorf("after clear: %+v", left)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// A browser upload is stored in the data dir, kept for playback once
// transcribed, and deleted with its transcript; a deleted transcript's
// audio route is gone too.
func TestTranscribeUploadAndAsk(t *testing.T) {
	a, srv := speechApp(t)
	b, err := os.ReadFile(mlxtest.Assets(t, "audio", "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/api/transcribe/upload?name=Board%20meeting.wav&size=" + itoa(int64(len(b))) + "&model=" + speechRepo + "&language=en&noFallback=1"
	res, err := http.Post(url, "application/octet-stream", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var it QueueItem
	json.NewDecoder(res.Body).Decode(&it)
	res.Body.Close()
	if res.StatusCode != 200 || it.Name != "Board meeting.wav" || !it.Uploaded || it.Path != "" {
		t.Fatalf("upload: %d %+v", res.StatusCode, it)
	}
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/upload", "x", nil); code != 400 || !strings.Contains(body, "name") {
		t.Errorf("upload without name: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/upload?name=a.wav&size=1000", "", nil); code != 400 || !strings.Contains(body, "incomplete (0 of 1000 bytes)") {
		t.Errorf("body lost on the way: %d %s", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/api/transcribe/upload?name=a.wav&task=summarize", "x", nil); code != 400 || !strings.Contains(body, "task") {
		t.Errorf("bad task: %d %s", code, body)
	}

	got := waitFinished(t, a, 2*time.Minute)["Board meeting.wav"]
	if got.State != "done" {
		t.Fatalf("upload entry: %+v", got)
	}
	tr, err := a.Service.GetTranscript(got.TranscriptID)
	if err != nil {
		t.Fatal(err)
	}
	if !transcription.KeptAudio(a.DataDir, tr.SourcePath) {
		t.Errorf("kept audio at %s", tr.SourcePath)
	}
	if left, _ := os.ReadDir(transcription.UploadDir(a.DataDir)); len(left) != 0 {
		t.Errorf("upload folder not emptied: %v", left)
	}
	code, body := do(t, "GET", srv.URL+"/api/transcripts/"+itoa(tr.ID)+"/audio", "", nil)
	if code != 200 || body != string(b) {
		t.Errorf("audio: %d, %d bytes", code, len(body))
	}

	// With no chat model that can answer (the Library holds only Whisper),
	// asking says what to get instead of opening a chat that cannot load.
	if _, err := a.Service.AskAboutTranscript(tr.ID); err == nil || !strings.Contains(err.Error(), "pull a chat model") {
		t.Fatalf("ask without a chat model: %v", err)
	}
	putSnapshot(t, os.Getenv("HF_HUB_CACHE"), "test/qwen3-chat", tinyChatModel(t))
	if _, err := a.Service.RescanModels(); err != nil {
		t.Fatal(err)
	}
	conv, err := a.Service.AskAboutTranscript(tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if conv.Title != "About Board meeting.wav" || !strings.Contains(conv.SystemPrompt, "[0:") || !strings.Contains(conv.SystemPrompt, "Board meeting.wav") {
		t.Errorf("conversation: %+v", conv)
	}
	if !strings.Contains(conv.Model, "test/qwen3-chat") || conv.TranscriptID != tr.ID {
		t.Errorf("asked with model %q about transcript %d, want test/qwen3-chat about %d", conv.Model, conv.TranscriptID, tr.ID)
	}
	if _, err := a.DB.Conversation(context.Background(), conv.ID); err != nil {
		t.Errorf("conversation not stored: %v", err)
	}

	if code, _ := do(t, "DELETE", srv.URL+"/api/transcripts/"+itoa(tr.ID), "", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if _, err := os.Stat(tr.SourcePath); !os.IsNotExist(err) {
		t.Errorf("kept audio survived the transcript: %v", err)
	}
	if code, _ := do(t, "GET", srv.URL+"/api/transcripts/"+itoa(tr.ID)+"/audio", "", nil); code != 404 {
		t.Errorf("audio of deleted transcript: %d", code)
	}
}

// Cancelling a queued entry skips it; cancelling the running one stops
// the engine and the job reports cancelled. A failed upload's copy is
// removed.
func TestTranscribeCancel(t *testing.T) {
	a, _ := speechApp(t)
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	slow := fast
	slow.NoFallback, slow.Language = false, "" // detection + fallback: many passes
	items, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk, jfk}, Options: slow})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Service.CancelTranscription(items[1].ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		q, _ := a.Service.TranscriptionQueue()
		if q[0].State == "running" && q[0].JobID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("first entry never ran: %+v", q)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.Service.CancelTranscription(items[0].ID); err != nil {
		t.Fatal(err)
	}
	waitFinished(t, a, time.Minute)
	q, _ := a.Service.TranscriptionQueue()
	if q[0].State != "cancelled" || q[1].State != "cancelled" || q[0].TranscriptID != 0 {
		t.Fatalf("after cancel: %+v", q)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if j, _ := a.Jobs.Get(q[0].JobID); j.State == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			j, _ := a.Jobs.Get(q[0].JobID)
			t.Fatalf("job: %+v", j)
		}
	}
	if ts, _ := a.Service.ListTranscripts(); len(ts) != 0 {
		t.Errorf("cancelled work saved transcripts: %+v", ts)
	}
	if err := a.Service.CancelTranscription("t999"); statusOf(err) != 404 {
		t.Errorf("unknown entry: %v", err)
	}
	if _, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk}, Options: TranscribeOptions{Language: "klingon"}}); statusOf(err) != 400 {
		t.Errorf("bad language: %v", err)
	}
}

// Without a model picked or a default in Settings, a file fails with
// what to do.
func TestTranscribeNeedsModel(t *testing.T) {
	a, _ := newTestApp(t)
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	if _, err := a.Service.EnqueueTranscriptions(EnqueueRequest{Paths: []string{jfk}}); err != nil {
		t.Fatal(err)
	}
	it := waitFinished(t, a, 30*time.Second)["jfk.wav"]
	if it.State != "failed" || !strings.Contains(it.Error, "No speech model chosen") {
		t.Fatalf("%+v", it)
	}
}

// The desktop export lands in Downloads without overwriting.
func TestSaveTranscriptExport(t *testing.T) {
	a, _ := newTestApp(t)
	dl := t.TempDir()
	defer func(old func() string) { downloadsDir = old }(downloadsDir)
	downloadsDir = func() string { return dl }
	segs := `[{"id":0,"seek":0,"start":0.5,"end":2.25,"text":" Hello there."}]`
	tr, err := a.DB.SaveTranscript(context.Background(), storeTranscript("memo.m4a", segs))
	if err != nil {
		t.Fatal(err)
	}
	p1, err := a.Service.SaveTranscriptExport(tr.ID, "srt")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := a.Service.SaveTranscriptExport(tr.ID, "srt")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p1) != "memo.srt" || filepath.Base(p2) != "memo (2).srt" {
		t.Errorf("paths %s, %s", p1, p2)
	}
	b, _ := os.ReadFile(p1)
	if string(b) != "1\n00:00:00,500 --> 00:00:02,250\nHello there.\n\n" {
		t.Errorf("srt %q", b)
	}
	if _, err := a.Service.SaveTranscriptExport(tr.ID, "pdf"); statusOf(err) != 400 {
		t.Errorf("bad format: %v", err)
	}
}

func storeTranscript(name, segs string) store.Transcript {
	return store.Transcript{SourcePath: "/nowhere/" + name, SourceName: name, Model: "m", Language: "en", Segments: json.RawMessage(segs)}
}

// Uploads left by a crash are cleared by the instance that holds the
// lock, never by a read-only CLI command running beside the app.
func TestUploadsClearedOnlyByLockHolder(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(transcription.UploadDir(dir), "upload-1-memo.wav")
	if err := os.MkdirAll(filepath.Dir(left), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(left), filepath.Base(left), []byte("RIFF"))
	ro, err := New(Options{DataDir: dir, NoLock: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("a NoLock app removed an upload: %v", err)
	}
	a, err := New(Options{DataDir: dir, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("leftover upload survived the start: %v", err)
	}
}

// tinyChatModel is the qwen3 family golden (random weights) with a chat
// template, so it chats rather than completes: enough to be chosen.
func tinyChatModel(t *testing.T) map[string][]byte {
	t.Helper()
	dir := mlxtest.Assets(t, "families", "qwen3-a", "hf")
	files := map[string][]byte{}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	var cfg map[string]any
	if err := json.Unmarshal(files["tokenizer_config.json"], &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["chat_template"] = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	files["tokenizer_config.json"] = b
	return files
}
