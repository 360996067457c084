package transcribe

import (
	"context"
	"testing"

	"hark/engine/vad"
)

// Word times with VAD do not depend on whether segments are also streamed
// to onSegment (the app always streams them): streaming used to remap the
// result's words in place, so mapping the result shifted them twice.
func TestVADWordsWithOnSegment(t *testing.T) {
	m := openGolden(t)
	samples := append(make([]float32, 16000*5), jfkSamples(t)...)
	o := DefaultOptions()
	o.Language, o.Temperatures, o.WordTimestamps = "en", []float64{0}, true
	v := vad.DefaultOptions()
	o.VAD = &v
	a, err := m.Transcribe(context.Background(), samples, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Transcribe(context.Background(), samples, o, func(Segment) {})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Segments {
		for j := range a.Segments[i].Words {
			if a.Segments[i].Words[j].StartSec != b.Segments[i].Words[j].StartSec {
				t.Fatalf("segment %d word %d: %v without onSegment, %v with", i, j, a.Segments[i].Words[j].StartSec, b.Segments[i].Words[j].StartSec)
			}
		}
	}
	if len(a.Segments) == 0 || len(a.Segments[0].Words) == 0 || a.Segments[0].Words[0].StartSec < 5 {
		t.Fatalf("first word before the 5 s of silence: %+v", a.Segments)
	}
}
