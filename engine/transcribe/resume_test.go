package transcribe

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"hark/engine/vad"
	"hark/mlx/mlxtest"
)

// A run resumed from the checkpoint after its first window ends exactly
// as the uninterrupted run does: same segments, times and text, with and
// without VAD. The checkpoint goes through JSON, as the app stores it.
func TestResumeFromCheckpoint(t *testing.T) {
	m := openGolden(t)
	samples := goldenAudio(t, mlxtest.Assets(t, "whisper", "golden"), "long65.wav")
	for _, useVAD := range []bool{false, true} {
		o := DefaultOptions()
		o.Language, o.Temperatures = "", []float64{0} // detected language is carried too
		if useVAD {
			v := vad.DefaultOptions()
			o.VAD = &v
		}
		var cps []Checkpoint
		o.Checkpoint = func(c Checkpoint) { cps = append(cps, c) }
		full, err := m.Transcribe(context.Background(), samples, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(cps) < 2 {
			t.Fatalf("vad=%v: %d checkpoints for 65 s; want one per window", useVAD, len(cps))
		}
		b, err := json.Marshal(cps[0])
		if err != nil {
			t.Fatal(err)
		}
		var cp Checkpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			t.Fatal(err)
		}
		o.Checkpoint = nil
		o.Resume = &cp
		var fresh []Segment
		got, err := m.Transcribe(context.Background(), samples, o, func(s Segment) { fresh = append(fresh, s) })
		if err != nil {
			t.Fatal(err)
		}
		if len(fresh) != len(full.Segments)-len(cp.Segments) {
			t.Errorf("vad=%v: %d segments decoded again after resume; want %d", useVAD, len(fresh), len(full.Segments)-len(cp.Segments))
		}
		if got.Text != full.Text || got.Language != full.Language || len(got.Segments) != len(full.Segments) {
			t.Fatalf("vad=%v: resumed %d segments %q (%s); want %d %q (%s)", useVAD, len(got.Segments), got.Text, got.Language, len(full.Segments), full.Text, full.Language)
		}
		for i := range full.Segments {
			a, b := full.Segments[i], got.Segments[i]
			if a.ID != b.ID || a.StartSec != b.StartSec || a.EndSec != b.EndSec || a.Start != b.Start || a.Text != b.Text || !slices.Equal(a.Tokens, b.Tokens) || a.Seek != b.Seek {
				t.Errorf("vad=%v segment %d: resumed %+v; want %+v", useVAD, i, b, a)
			}
		}
	}
}
