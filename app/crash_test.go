package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hark/app/transcription"
	"hark/library"
	"hark/library/librarytest"
	"hark/library/store"
	"hark/mlx/mlxtest"
)

// The crash-safety suite: a real Hark (this test binary re-executed as a
// child, with the real SQLite file, the lock and the HTTP API) is killed
// with SIGKILL in the middle of some work, then started again; nothing
// the user had may be lost, and what was cut off is marked as such.

// TestMain runs the child half when HARK_CRASH_APP_DATA is set: an App on
// that data folder serving the API on 127.0.0.1 until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("HARK_CRASH_APP_DATA"); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

func crashChild(dir string) {
	a, err := New(Options{DataDir: dir, Stderr: io.Discard})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("HARK_CRASH_TOKEN_DELAY")); err == nil {
		// Slow decode so the kill lands mid-reply; save drafts often so
		// the test need not wait long for one.
		a.chats.TokenHook = func() { time.Sleep(d) }
		a.chats.DraftEvery = 100 * time.Millisecond
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("url http://" + ln.Addr().String())
	http.Serve(ln, a.Handler())
	os.Exit(4)
}

// crashApp starts the child on data with extra environment and returns
// its base URL and the process to kill.
func crashApp(t *testing.T, data string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "HARK_CRASH_APP_DATA="+data), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "url ") {
		t.Fatalf("child did not start: %q", sc.Text())
	}
	go io.Copy(io.Discard, out)
	return strings.TrimPrefix(sc.Text(), "url "), cmd
}

// kill9 kills the child the hard way and reaps it.
func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended by %v, not SIGKILL", cmd.ProcessState)
	}
}

// restart opens the data folder again, as the next launch would (lock
// and all), once the killed child is gone.
func restart(t *testing.T, data string) *App {
	t.Helper()
	a, err := New(Options{DataDir: data, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("start after SIGKILL: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// waitFor polls cond every 20 ms up to timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill -9 while a reply streams: after a restart the user's message is
// there, the reply is kept up to its last draft (at least what had
// streamed a few draft periods before the kill) and marked "interrupted".
func TestCrashDuringChatReply(t *testing.T) {
	cache := t.TempDir()
	chatSnapshot(t, cache, "hark-test/stories", storiesModel(t))
	id := fingerprint("hark-test/stories")
	data := t.TempDir()
	url, cmd := crashApp(t, data, "HF_HUB_CACHE="+cache, "HARK_CRASH_TOKEN_DELAY=30ms")

	waitFor(t, 30*time.Second, "the model to be listed", func() bool {
		var ms []ChatModel
		getJSON(t, url+"/api/chat/models", &ms)
		return len(ms) == 1 && ms[0].ID == id
	})
	// A conversation finished before the crash, which must come back as it was.
	var done store.Conversation
	if code, body := postJSON(t, url+"/api/chats", `{"model":"`+id+`","sampling":{"maxTokens":8,"temperature":0}}`, &done); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := postJSON(t, url+"/api/chats/"+jsonNumber(done.ID)+"/messages", `{"text":"Lily and Tom"}`, nil); code != 200 {
		t.Fatalf("send: %d %s", code, body)
	}
	var before []store.Message
	waitFor(t, 60*time.Second, "the first reply", func() bool {
		before = nil
		getJSON(t, url+"/api/chats/"+jsonNumber(done.ID)+"/messages", &before)
		return len(before) == 2
	})
	var c store.Conversation
	if code, body := postJSON(t, url+"/api/chats", `{"model":"`+id+`","sampling":{"maxTokens":400,"temperature":0}}`, &c); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	base := url + "/api/chats/" + jsonNumber(c.ID)
	if code, body := postJSON(t, base+"/messages", `{"text":"Once upon a time"}`, nil); code != 200 {
		t.Fatalf("send: %d %s", code, body)
	}
	var st ChatStatusInfo
	waitFor(t, 60*time.Second, "40 bytes of reply", func() bool {
		st = ChatStatusInfo{}
		getJSON(t, url+"/api/chat/status", &st)
		return st.Generating && len(st.Text) >= 40
	})
	early := st.Text
	time.Sleep(350 * time.Millisecond) // three draft periods
	getJSON(t, url+"/api/chat/status", &st)
	if !st.Generating {
		t.Fatalf("the reply ended before the kill (%d bytes); slow the child down", len(st.Text))
	}
	seen := st.Text
	kill9(t, cmd)

	t.Setenv("HF_HUB_CACHE", cache)
	a := restart(t, data)
	msgs, err := a.Service.GetMessages(c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Content != "Once upon a time" || msgs[1].Role != "assistant" {
		t.Fatalf("thread after restart: %+v", msgs)
	}
	reply := msgs[1]
	if len(reply.Content) <= len(early) || !strings.HasPrefix(seen, reply.Content) && !strings.HasPrefix(reply.Content, seen) {
		t.Fatalf("kept reply %q\nstreamed %d bytes before the last drafts: %q\nstatus at the kill: %q", reply.Content, len(early), early, seen)
	}
	var stats ChatStats
	if err := json.Unmarshal(reply.Stats, &stats); err != nil || stats.FinishReason != store.FinishInterrupted || stats.Model != id {
		t.Fatalf("stats %s (%v); want finishReason interrupted", reply.Stats, err)
	}
	if st, _ := a.Service.ChatStatus(); st.Generating {
		t.Fatalf("status after restart: %+v", st)
	}
	after, err := a.Service.GetMessages(done.ID)
	if err != nil || len(after) != 2 {
		t.Fatalf("the earlier conversation after restart: %+v %v", after, err)
	}
	for i := range after {
		if after[i].ID != before[i].ID || after[i].Content != before[i].Content || string(after[i].Stats) != string(before[i].Stats) {
			t.Fatalf("earlier message %d changed:\n%+v\n%+v", i, before[i], after[i])
		}
	}
}

// kill -9 during a transcription batch of uploads: after a restart every
// file is either transcribed or back in the queue as "interrupted" with
// its uploaded audio still on disk, and it can be retried.
func TestCrashDuringTranscriptionBatch(t *testing.T) {
	cache := speechCache(t)
	audio, err := os.ReadFile(mlxtest.Assets(t, "audio", "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	url, cmd := crashApp(t, data, "HF_HUB_CACHE="+cache)
	waitFor(t, 30*time.Second, "the Whisper model to be listed", func() bool {
		var ms []library.Model
		getJSON(t, url+"/api/models", &ms)
		return len(ms) == 1
	})
	const n = 4
	for i := range n {
		u := fmt.Sprintf("%s/api/transcribe/upload?name=take%d.wav&size=%d&model=%s&language=en&noFallback=1", url, i, len(audio), speechRepo)
		res, err := http.Post(u, "application/octet-stream", strings.NewReader(string(audio)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("upload %d: %d", i, res.StatusCode)
		}
	}
	waitFor(t, 60*time.Second, "a file being transcribed", func() bool {
		var q []QueueItem
		getJSON(t, url+"/api/transcribe/queue", &q)
		for _, it := range q {
			if it.State == "running" && it.Phase == "transcribing" {
				return true
			}
		}
		return false
	})
	kill9(t, cmd)

	t.Setenv("HF_HUB_CACHE", cache)
	a := restart(t, data)
	q, _ := a.Service.TranscriptionQueue()
	ts, err := a.Service.ListTranscripts()
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for _, tr := range ts {
		done[tr.SourceName] = true
	}
	interrupted := 0
	for _, it := range q {
		if it.State != StateInterrupted || !it.Uploaded || !strings.Contains(it.Error, "audio is kept") {
			t.Errorf("restored entry %+v", it)
			continue
		}
		b, err := os.ReadFile(it.Source())
		if err != nil || len(b) != len(audio) {
			t.Errorf("%s: uploaded audio lost: %d bytes, %v", it.Name, len(b), err)
		}
		if done[it.Name] {
			t.Errorf("%s is both transcribed and interrupted", it.Name)
		}
		done[it.Name] = true
		interrupted++
	}
	if len(done) != n || interrupted == 0 {
		t.Fatalf("after restart: %d transcripts, %d interrupted entries; want all %d files, some interrupted", len(ts), interrupted, n)
	}
	// Retrying runs each to the end with the kept audio.
	waitFor(t, 30*time.Second, "the Whisper model to be listed again", func() bool {
		ms, _ := a.Service.ListModels()
		return len(ms) == 1
	})
	// Retrying one runs it to the end with the kept audio; clearing the
	// others lets their copies go.
	if _, err := a.Service.RetryTranscription(q[0].ID); err != nil {
		t.Fatalf("retry %s: %v", q[0].Name, err)
	}
	if it := waitFinished(t, a, 2*time.Minute)[q[0].Name]; it.State != "done" {
		t.Errorf("%s after retry: %+v", q[0].Name, it)
	}
	if left, _ := a.Service.ClearTranscriptionQueue(); len(left) != 0 {
		t.Errorf("left after clearing: %+v", left)
	}
	if left, _ := os.ReadDir(transcription.UploadDir(data)); len(left) != 0 {
		t.Errorf("upload copies left after the queue was cleared: %v", left)
	}
}

// kill -9 during a pull from a (fake, local) hub: the partial blob stays,
// after a restart the snapshot is Incomplete (not "downloading" and not
// Ready), and Resume finishes it with an HTTP Range request from where the
// partial blob ends.
func TestCrashDuringPullThenResume(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	files := storiesModel(t)
	hub := librarytest.NewHub(t, "org/crash", commit, files)
	hub.SetSlow(16 << 10)
	cache, data := t.TempDir(), t.TempDir()
	url, cmd := crashApp(t, data, "HF_HUB_CACHE="+cache, "HF_ENDPOINT="+hub.URL)
	if code, body := postJSON(t, url+"/api/models/pull", `"org/crash"`, nil); code != 200 {
		t.Fatalf("pull: %d %s", code, body)
	}
	weights := files["model.safetensors"]
	inc := filepath.Join(cache, "models--org--crash", "blobs", librarytest.Sha256(weights)+".incomplete")
	waitFor(t, 60*time.Second, "half the weights", func() bool {
		st, err := os.Stat(inc)
		return err == nil && st.Size() >= int64(len(weights))/4
	})
	kill9(t, cmd)
	st, err := os.Stat(inc)
	if err != nil || st.Size() == 0 || st.Size() >= int64(len(weights)) {
		t.Fatalf("partial blob after the kill: %v, %v", st, err)
	}
	have := st.Size()

	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_ENDPOINT", hub.URL)
	a := restart(t, data)
	id := "hf:org/crash@" + commit
	// The first scan of the new start (run here, not raced with the one
	// the app starts) replaces what the killed run indexed.
	if _, err := a.Service.RescanModels(); err != nil {
		t.Fatal(err)
	}
	ms, _ := a.Service.ListModels()
	if len(ms) != 1 {
		t.Fatalf("models after restart: %+v", ms)
	}
	m := ms[0]
	if m.ID != id || !m.Incomplete || m.Downloading || !library.Resumable(m) {
		t.Fatalf("after the kill: %+v; want Incomplete, resumable, not downloading", m)
	}
	if cms, _ := a.Service.ListChatModels(); len(cms) != 0 {
		t.Fatalf("an incomplete model is offered for chat: %+v", cms)
	}
	if hs, _ := a.Service.HubStatus(); !hs.Reachable || hs.Endpoint != hub.URL {
		t.Fatalf("hub status %+v", hs)
	}

	hub.SetSlow(0)
	job, err := a.Service.ResumeModel(id)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the resumed pull", func() bool {
		job, _ = a.Jobs.Get(job.ID)
		return job.State != "running"
	})
	if job.State != "done" {
		t.Fatalf("resume job %+v", job)
	}
	rs := hub.Ranges()
	if want := fmt.Sprintf("bytes=%d-", have); rs[len(rs)-1] != want {
		t.Fatalf("resume asked %q; want %q (the %d bytes kept)", rs, want, have)
	}
	if _, err := os.Stat(inc); !os.IsNotExist(err) {
		t.Fatalf("partial blob left after the resume: %v", err)
	}
	res, err := a.library().Verify(context.Background(), id, nil)
	if err != nil || !res.OK {
		t.Fatalf("verify after resume: %+v %v", res, err)
	}
	m, _ = a.library().Get(context.Background(), id)
	if m.Incomplete || library.Resumable(m) {
		t.Fatalf("after resume: %+v", m)
	}
	if _, err := a.Service.ResumeModel(id); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Fatalf("resume of a complete model: %v", err)
	}
}
