package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"hark/app/runner"
	"hark/engine"
)

// The /v1 API under concurrent clients, over real HTTP on 127.0.0.1
// against the App's own handler, with stories260K from the shared assets.

// batchAPI starts an App whose library holds stories260K (as storiesRepo)
// and serves it.
func batchAPI(t *testing.T) (*App, string) {
	t.Helper()
	a, srv, _ := storiesChat(t)
	return a, srv.URL
}

// batchReq is one client's request.
type batchReq struct {
	prompt string
	temp   float64
	seed   int64
	max    int
	stream bool
}

func (q batchReq) body() string {
	b, _ := json.Marshal(map[string]any{"model": storiesRepo, "messages": []map[string]string{{"role": "user", "content": q.prompt}},
		"temperature": q.temp, "seed": q.seed, "max_tokens": q.max, "stream": q.stream})
	return string(b)
}

// clientReply is what a client got.
type clientReply struct {
	text, finish string
}

// complete posts q and returns its reply; a streamed one is read from its
// SSE events. onChunk, if set, runs after each streamed piece of text and
// may end the request by returning false (the client goes away).
func complete(ctx context.Context, url string, q batchReq, onChunk func() bool) (clientReply, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(q.body()))
	if err != nil {
		return clientReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return clientReply{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return clientReply{}, fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	if !q.stream {
		var r struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.NewDecoder(res.Body).Decode(&r); err != nil || len(r.Choices) != 1 {
			return clientReply{}, fmt.Errorf("reply %+v: %v", r, err)
		}
		return clientReply{r.Choices[0].Message.Content, r.Choices[0].FinishReason}, nil
	}
	var out clientReply
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return out, nil
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return out, fmt.Errorf("event %q: %v", data, err)
		}
		for _, c := range ch.Choices {
			out.text += c.Delta.Content
			if c.FinishReason != nil {
				out.finish = *c.FinishReason
			}
			if c.Delta.Content != "" && onChunk != nil && !onChunk() {
				return out, context.Canceled
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	return out, fmt.Errorf("stream ended without [DONE] after %q", out.text)
}

// batchOf is the chat model's batch now.
func batchOf(t *testing.T, a *App) runner.Model {
	t.Helper()
	for _, m := range a.Runner.Loaded() {
		if m.Kind == runner.Chat && m.Batch != nil {
			return m
		}
	}
	t.Fatalf("no chat model loaded: %+v", a.Runner.Loaded())
	return runner.Model{}
}

// Eight clients at once, half streaming, half sampling with fixed seeds:
// all complete, each gets what the same request gets alone, and their
// rows decoded together.
func TestAPIEightClientsShareABatch(t *testing.T) {
	a, url := batchAPI(t)
	prompts := []string{"Once upon a time", "The cat", "Lily went to the park", "Tom had a red ball",
		"One day", "The sun was hot", "A little bird", "Mom said"}
	reqs := make([]batchReq, len(prompts))
	for i, p := range prompts {
		reqs[i] = batchReq{prompt: p, max: 120 + 10*i, stream: i%2 == 0, seed: int64(40 + i)}
		if i%4 >= 2 {
			reqs[i].temp = 0.9
		}
	}
	alone := make([]clientReply, len(reqs))
	for i, q := range reqs {
		r, err := complete(context.Background(), url, q, nil)
		if err != nil {
			t.Fatalf("client %d alone: %v", i, err)
		}
		alone[i] = r
	}
	before := batchOf(t, a).Batch
	got := make([]clientReply, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = complete(context.Background(), url, q, nil)
		}()
	}
	close(start)
	wg.Wait()
	took := time.Since(t0)
	for i := range reqs {
		if errs[i] != nil {
			t.Errorf("client %d: %v", i, errs[i])
			continue
		}
		if got[i] != alone[i] || got[i].text == "" {
			t.Errorf("client %d (temperature %g, stream %v): got %+v, alone %+v", i, reqs[i].temp, reqs[i].stream, got[i], alone[i])
		}
	}
	m := batchOf(t, a)
	b := m.Batch
	t.Logf("8 clients in %v: batch %+v (before: %+v)", took, *b, *before)
	if before.PeakActive > 1 {
		t.Errorf("one client at a time already decoded %d rows together", before.PeakActive)
	}
	if b.PeakActive < 4 {
		t.Errorf("8 concurrent clients decoded at most %d rows together, want at least 4", b.PeakActive)
	}
	if b.Rows != 0 || b.KVBytes != 0 {
		t.Errorf("after every client ended the batch holds %+v", *b)
	}
}

// batchNow is the chat model's batch now (zero: no chat model loaded);
// safe off the test's goroutine.
func batchNow(a *App) engine.BatchStats {
	for _, m := range a.Runner.Loaded() {
		if m.Kind == runner.Chat && m.Batch != nil {
			return *m.Batch
		}
	}
	return engine.BatchStats{}
}

// A client that goes away mid-stream frees its row within a step: the
// batch's row count drops while the others still decode, and they finish
// exactly as they would have without it.
func TestAPIDisconnectFreesItsRow(t *testing.T) {
	a, url := batchAPI(t)
	// As long as the context allows, so the others outlive the leaver.
	reqs := []batchReq{
		{prompt: "Once upon a time", max: 480, stream: true, temp: 0.9, seed: 3},
		{prompt: "The cat", max: 480, stream: true, temp: 0.9, seed: 5},
		{prompt: "Lily went to the park", max: 480, stream: true, temp: 0, seed: 7},
	}
	alone := make([]clientReply, len(reqs))
	aloneTokens := make([]int, len(reqs))
	for i, q := range reqs {
		n0 := generated(t, a)
		r, err := complete(context.Background(), url, q, nil)
		if err != nil {
			t.Fatalf("client %d alone: %v", i, err)
		}
		alone[i], aloneTokens[i] = r, generated(t, a)-n0
	}
	n0 := generated(t, a)
	var mu sync.Mutex
	done := make([]bool, len(reqs))
	got := make([]clientReply, len(reqs))
	errs := make([]error, len(reqs))
	left := make(chan struct{})
	var wg sync.WaitGroup
	for i, q := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var onChunk func() bool
			if i == 0 {
				chunks := 0
				// Leave once a few pieces arrived and all three rows
				// decode together.
				onChunk = func() bool {
					chunks++
					return chunks < 5 || batchNow(a).Active < len(reqs)
				}
			}
			r, err := complete(context.Background(), url, q, onChunk)
			mu.Lock()
			got[i], errs[i], done[i] = r, err, true
			mu.Unlock()
			if i == 0 {
				close(left)
			}
		}()
	}
	<-left
	// The leaver's row goes within a step; the others must still be
	// decoding when it does.
	var rows int
	var othersLive bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		rows = batchNow(a).Rows
		mu.Lock()
		othersLive = !done[1] && !done[2]
		mu.Unlock()
		if rows < len(reqs) || time.Now().After(deadline) {
			break
		}
	}
	if rows != len(reqs)-1 || !othersLive {
		t.Errorf("after the client left: %d rows in the batch, others still decoding %v; want %d rows while they decode", rows, othersLive, len(reqs)-1)
	}
	wg.Wait()
	if errs[0] != context.Canceled || !strings.HasPrefix(alone[0].text, got[0].text) || len(got[0].text) >= len(alone[0].text) {
		t.Errorf("the leaver got %q (%v); alone %q", got[0].text, errs[0], alone[0].text)
	}
	for i := 1; i < len(reqs); i++ {
		if errs[i] != nil || got[i] != alone[i] {
			t.Errorf("client %d beside the leaver: %+v (%v), alone %+v", i, got[i], errs[i], alone[i])
		}
	}
	// The server, not only the client, stopped the leaver's row early.
	if n := generated(t, a) - n0 - aloneTokens[1] - aloneTokens[2]; n >= aloneTokens[0]/2 {
		t.Errorf("the leaver's row generated %d tokens of its %d: it was not freed when the client left", n, aloneTokens[0])
	}
	b := batchOf(t, a).Batch
	if b.PeakActive < len(reqs) || b.Rows != 0 {
		t.Errorf("batch %+v: want %d rows decoded together and none left", *b, len(reqs))
	}
	t.Logf("alone: %d, %d, %d bytes of text (%s, %s, %s); batch %+v", len(alone[0].text), len(alone[1].text), len(alone[2].text), alone[0].finish, alone[1].finish, alone[2].finish, *b)
}

// generated is the chat model's generated-token total (0 before it is
// loaded), once it is idle (a handler gives its lease back just after its
// reply).
func generated(t *testing.T, a *App) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		ms := a.Runner.Loaded()
		if len(ms) == 0 {
			return 0
		}
		for _, m := range ms {
			if m.Kind == runner.Chat && m.Counters != nil {
				return m.Counters.GeneratedTokens
			}
		}
	}
	t.Fatalf("the chat model never went idle: %+v", a.Runner.Loaded())
	return 0
}

// Under a memory limit with room for one long row, the conversation the
// model's admission counts, the clients that come with it wait for it
// (each row holds its own keys and values, in steps of 256 positions, so
// a second row, even a short one, does not fit beside it) and then get
// what they get alone; a client whose row could not fit even alone is
// refused at once with a 503 that says why, before anything is streamed.
func TestAPIRowsWithinTheMemoryLimit(t *testing.T) {
	a, url := batchAPI(t)
	long := batchReq{prompt: "Once upon a time", max: 400, stream: true, seed: 9, temp: 0.9}
	short := batchReq{prompt: "The cat", max: 20, seed: 2}
	aloneLong, err := complete(context.Background(), url, long, nil)
	if err != nil {
		t.Fatal(err)
	}
	aloneShort, err := complete(context.Background(), url, short, nil)
	if err != nil {
		t.Fatal(err)
	}
	generated(t, a) // idle: its status is its admission alone
	var admission int64
	for _, m := range a.Runner.Loaded() {
		if m.Kind == runner.Chat {
			admission = m.Bytes
		}
	}
	// Below the admission no row fits, however short.
	a.Runner.SetLimit(admission - 1)
	code, body := do(t, "POST", url+"/v1/chat/completions", batchReq{prompt: "Hello", max: 20, stream: true}.body(),
		map[string]string{"Content-Type": "application/json"})
	msg, errCode := apiError(t, body)
	if code != 503 || errCode != "insufficient_memory" || !strings.Contains(msg, "max_tokens") {
		t.Fatalf("a row too big for the limit: %d %s", code, body)
	}
	// Room for exactly the admission's conversation: one long row.
	a.Runner.SetLimit(admission)
	var wg sync.WaitGroup
	got := make([]clientReply, 3)
	errs := make([]error, 3)
	for i, q := range []batchReq{long, long, short} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = complete(context.Background(), url, q, nil)
		}()
	}
	wg.Wait()
	for i, want := range []clientReply{aloneLong, aloneLong, aloneShort} {
		if errs[i] != nil || got[i] != want {
			t.Errorf("client %d under the limit: %+v (%v), alone %+v", i, got[i], errs[i], want)
		}
	}
	b := batchOf(t, a).Batch
	if b.PeakActive != 1 {
		t.Errorf("%d rows decoded together where the limit holds one long row", b.PeakActive)
	}
	t.Logf("admission %d; batch %+v", admission, *b)
}
