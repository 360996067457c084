package transcription

import (
	"hark/engine/transcribe"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAdvancedOptionsChecked(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Temperatures: []float64{0.4, 0.2}}, "must rise"},
		{Options{Temperatures: []float64{0, 2}}, "0 to 1"},
		{Options{NoSpeechThreshold: ptr(1.2)}, "no-speech threshold"},
		{Options{LogprobThreshold: ptr(0.5)}, "log probability threshold"},
		{Options{CompressionRatioThreshold: ptr(-1.0)}, "compression ratio threshold"},
		{Options{CompressionRatioThreshold: ptr(math.NaN())}, "not a number"},
		{Options{InitialPrompt: strings.Repeat("word ", 500)}, "initial prompt"},
	} {
		if _, err := c.o.Normalize(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v; want %q", c.o, err, c.want)
		}
	}

	// Unset knobs keep OpenAI's defaults; set ones reach the engine.
	o, err := Options{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	def, got := transcribe.DefaultOptions(), engineOptions(o)
	if !slices.Equal(got.Temperatures, def.Temperatures) || got.NoSpeechThreshold != def.NoSpeechThreshold ||
		got.LogProbThreshold != def.LogProbThreshold || got.CompressionRatioThreshold != def.CompressionRatioThreshold {
		t.Errorf("defaults changed: %+v", got)
	}
	o, err = Options{
		Temperatures: []float64{0, 0.5}, NoSpeechThreshold: ptr(0.3), LogprobThreshold: ptr(-2.0),
		CompressionRatioThreshold: ptr(3.0), InitialPrompt: "  Kubernetes, Grafana.  ", BeamSize: 3,
	}.Normalize()
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

func ptr[T any](v T) *T { return &v }
