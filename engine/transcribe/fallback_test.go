package transcribe

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"hark/mlx/mlxtest"
)

func jfkSamples(t *testing.T) []float32 {
	return goldenAudio(t, mlxtest.Assets(t, "whisper", "golden"), "jfk.wav")
}

func openGolden(t *testing.T) *Model {
	m, err := Open(filepath.Join(mlxtest.Assets(t, "whisper", "golden"), "model"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestTemperatureFallback(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openGolden(t)
	samples := jfkSamples(t)
	run := func(o Options) *Result {
		t.Helper()
		res, err := m.Transcribe(context.Background(), samples, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Segments) == 0 {
			t.Fatal("no segments")
		}
		for i, s := range res.Segments {
			if s.EndSec < s.StartSec || (i > 0 && s.StartSec < res.Segments[i-1].StartSec) {
				t.Errorf("segment %d goes back in time: %v-%v", i, s.StartSec, s.EndSec)
			}
		}
		return res
	}
	o := DefaultOptions()
	o.Language, o.SampleLen, o.BestOf, o.Seed = "en", 20, 2, 7
	// A random model's text is improbable (avg logprob about -8), so every
	// temperature fails the -1.0 threshold and the last one is kept.
	var retries []Retry
	o.Retry = func(r Retry) { retries = append(retries, r) }
	a := run(o)
	o.Retry = nil
	// Every window is retried at 0.2 ... 1.0, in order, each retry naming
	// its window and why the previous attempt was rejected.
	if len(retries) == 0 || len(retries)%5 != 0 {
		t.Fatalf("%d retries; want 5 per window", len(retries))
	}
	for i, r := range retries {
		want := o.Temperatures[i%5+1]
		if r.Temperature != want || r.Attempt != i%5+2 || r.Attempts != 6 || r.Window != i/5+1 {
			t.Errorf("retry %d = %+v; want window %d attempt %d at %v", i, r, i/5+1, i%5+2, want)
		}
		if r.To <= r.From || r.Reason == "" {
			t.Errorf("retry %d: span %v-%v, reason %q", i, r.From, r.To, r.Reason)
		}
	}
	for _, s := range a.Segments {
		if s.Temperature != 1.0 || s.AvgLogprob >= -1 {
			t.Fatalf("segment at temperature %v, avg_logprob %v; want the 1.0 fallback", s.Temperature, s.AvgLogprob)
		}
	}
	// Sampling is reproducible for a seed.
	b := run(o)
	if !slices.EqualFunc(a.Segments, b.Segments, func(x, y Segment) bool { return slices.Equal(x.Tokens, y.Tokens) }) {
		t.Error("same seed gave different samples")
	}
	// With the thresholds off the first temperature is kept.
	o.LogProbThreshold, o.CompressionRatioThreshold = None, None
	c := run(o)
	for _, s := range c.Segments {
		if s.Temperature != 0 {
			t.Fatalf("segment at temperature %v with fallback disabled", s.Temperature)
		}
	}
}

func TestCancelStopsTranscription(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openGolden(t)
	ctx, cancel := context.WithCancel(context.Background())
	o := DefaultOptions()
	o.Language, o.Temperatures = "en", []float64{0}
	calls := 0
	res, err := m.Transcribe(ctx, goldenAudio(t, mlxtest.Assets(t, "whisper", "golden"), "long65.wav"), o, func(Segment) {
		calls++
		cancel() // stop after the first window's segments
	})
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || len(res.Segments) == 0 || len(res.Segments) != calls {
		t.Fatalf("partial result lost: %v segments, %d callbacks", res, calls)
	}
	var text string
	for _, s := range res.Segments {
		text += s.Text
	}
	if res.Text != text {
		t.Errorf("partial text %q, segments say %q", res.Text, text)
	}
	if res.Segments[len(res.Segments)-1].Seek != 0 {
		t.Errorf("decoding went on past the first window after cancel")
	}
	if _, err := m.Transcribe(context.Background(), nil, o, nil); err != ErrNoAudio {
		t.Errorf("empty audio: %v", err)
	}
}
