package runner

import (
	"context"
	"sync"
	"testing"
	"time"

	"hark/engine"
	"hark/engine/audio"
	"hark/engine/transcribe"
	"hark/mlx/mlxtest"
)

// A chat reply asked for while a long transcription runs gets its first
// token (and all its tokens) before the transcription ends: the speech
// model and the chat model run side by side, neither waits for the
// other's whole job.
func TestChatDuringTranscription(t *testing.T) {
	chat, speech := models(t)
	one, err := audio.Decode(mlxtest.Assets(t, "audio", "jfk.wav"), audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// JFK's 11 s: one window, whose decoding on the tiny random model
	// runs to its token limit, seconds of work.
	samples := one
	r := New(Options{})
	defer r.Close()
	s, err := r.Acquire(context.Background(), Speech, speech, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	c, err := r.Share(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()

	var (
		mu          sync.Mutex
		segments    int
		transcribed time.Time
	)
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := s.Speech.Transcribe(context.Background(), samples, transcribe.Options{Language: "en", Temperatures: []float64{0}}, func(transcribe.Segment) {
			mu.Lock()
			segments++
			mu.Unlock()
		})
		mu.Lock()
		transcribed = time.Now()
		mu.Unlock()
		done <- err
	}()
	<-started
	// Into the transcription's first window (its encoder pass alone
	// takes longer than this on the tiny model).
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	early := !transcribed.IsZero()
	mu.Unlock()
	if early {
		t.Fatal("the transcription ended before the chat request was sent; the test needs longer audio")
	}
	var firstTok time.Time
	res, err := c.Engine.GenerateBatched(context.Background(), []int{1, 403}, engine.Options{MaxTokens: 16}, func(string) error {
		if firstTok.IsZero() {
			firstTok = time.Now()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	replied := time.Now()
	mu.Lock()
	during := transcribed.IsZero()
	mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(res.Tokens) == 0 || firstTok.IsZero() {
		t.Fatalf("no reply: %+v", res)
	}
	if !during || !firstTok.Before(transcribed) || !replied.Before(transcribed) {
		t.Fatalf("chat first token at %v, reply at %v, transcription ended at %v (%d segments)", firstTok.Format(time.StampMicro), replied.Format(time.StampMicro), transcribed.Format(time.StampMicro), segments)
	}
	t.Logf("reply done %v before the transcription (%d segments)", transcribed.Sub(replied), segments)
}

// A chat model is admitted with its shared prefix cache's bound on top of
// its estimate, and the engine is loaded with that bound.
func TestPrefixCacheCounted(t *testing.T) {
	chat, _ := models(t)
	r := New(Options{})
	defer r.Close()
	l, err := r.Share(context.Background(), Chat, chat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	est, err := engine.Estimate(chat, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	limit := l.Engine.PrefixCache().Limit
	if limit <= 0 || limit > est.KVCache {
		t.Fatalf("prefix cache limit %d for a KV estimate of %d", limit, est.KVCache)
	}
	if got := r.Loaded(); len(got) != 1 || got[0].Bytes != est.Total+limit {
		t.Fatalf("loaded %+v; want %d bytes (estimate %d + prefix cache %d)", got, est.Total+limit, est.Total, limit)
	}
	if _, err := r.Share(context.Background(), Speech, chat, nil); err == nil {
		t.Fatal("a speech model was shared")
	}
}
