package transcribe

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"hark/engine/audio"
	"hark/engine/vad"
	"hark/mlx/mlxtest"
)

// 20 s of digital silence then jfk: Silero finds the speech only at the
// end, Whisper decodes only that, and every time lands after the silence
// (less the 400 ms padding), exactly where the same decode of the speech
// alone puts it plus the region's start.
func TestVADSilenceThenSpeech(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openGolden(t)
	jfk := jfkSamples(t)
	x := append(make([]float32, 20*16000), jfk...)

	o := DefaultOptions()
	o.Language, o.Temperatures = "en", []float64{0}
	vo := vad.DefaultOptions()
	o.VAD = &vo
	var streamed []Segment
	res, err := m.Transcribe(context.Background(), x, o, func(s Segment) { streamed = append(streamed, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) == 0 || res.Skipped[0].Start != 0 || res.Skipped[0].End < 19.5 {
		t.Fatalf("skipped %v: the 20 s of silence should be", res.Skipped)
	}
	regionStart := res.Skipped[0].End
	t.Logf("speech from %.3f s; %d segments; skipped %v", regionStart, len(res.Segments), res.Skipped)
	if len(res.Segments) == 0 {
		t.Fatal("no segments")
	}
	for _, s := range res.Segments {
		if s.StartSec < regionStart || s.StartSec < 20-0.4 {
			t.Errorf("segment %d starts at %v, inside the silence", s.ID, s.StartSec)
		}
	}
	if g := res.Segments[0].SkippedBefore; g == nil || *g != res.Skipped[0] {
		t.Errorf("first segment's skipped_before %v, want %v", g, res.Skipped[0])
	}
	// The same decode of the speech region alone, shifted.
	r0 := int(math.Round(regionStart * 16000))
	o.VAD = nil
	ref, err := m.Transcribe(context.Background(), x[r0:], o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Segments) != len(res.Segments) {
		t.Fatalf("%d segments with VAD, %d on the speech alone", len(res.Segments), len(ref.Segments))
	}
	for i, s := range res.Segments {
		r := ref.Segments[i]
		if !slices.Equal(s.Tokens, r.Tokens) || s.StartSec != r.StartSec+float64(r0)/16000 || s.EndSec != r.EndSec+float64(r0)/16000 {
			t.Errorf("segment %d: %v-%v %v, want %v-%v %v", i, s.StartSec, s.EndSec, s.Tokens, r.StartSec+regionStart, r.EndSec+regionStart, r.Tokens)
		}
		if s.Start != seconds(s.StartSec) || streamed[i].StartSec != s.StartSec || streamed[i].EndSec != s.EndSec {
			t.Errorf("segment %d: streamed %v-%v, result %v-%v", i, streamed[i].StartSec, streamed[i].EndSec, s.StartSec, s.EndSec)
		}
	}

	// From a file: the same segments (the regions are read from the file).
	p := filepath.Join(t.TempDir(), "silence_jfk.wav")
	if err := writeWAV(p, x); err != nil {
		t.Fatal(err)
	}
	o.VAD = &vo
	fres, err := m.TranscribeFile(context.Background(), p, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fres.Segments) != len(res.Segments) {
		t.Fatalf("file: %d segments, in memory %d", len(fres.Segments), len(res.Segments))
	}
	for i := range fres.Segments {
		a, b := fres.Segments[i], res.Segments[i]
		if !slices.Equal(a.Tokens, b.Tokens) || a.StartSec != b.StartSec || a.EndSec != b.EndSec {
			t.Errorf("file segment %d: %v-%v, in memory %v-%v", i, a.StartSec, a.EndSec, b.StartSec, b.EndSec)
		}
	}
}

// Pure silence: no segments, Whisper never runs (the model here would
// otherwise decode at least one window), and progress ends at the end.
func TestVADPureSilence(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := speechlessModel(t)
	o := DefaultOptions()
	o.Language = "en"
	vo := vad.DefaultOptions()
	o.VAD = &vo
	var last time.Duration
	o.Progress = func(d, _ time.Duration) { last = d }
	x := make([]float32, 60*16000)
	res, err := m.Transcribe(context.Background(), x, o, func(Segment) { t.Error("a segment in silence") })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Segments) != 0 || res.Text != "" || len(res.Skipped) != 1 || res.Skipped[0] != (Gap{0, 60}) {
		t.Fatalf("segments %v, skipped %v", res.Segments, res.Skipped)
	}
	if last != 60*time.Second || res.Duration != 60*time.Second {
		t.Fatalf("progress %v, duration %v", last, res.Duration)
	}
	p := filepath.Join(t.TempDir(), "silence.wav")
	if err := writeWAV(p, x); err != nil {
		t.Fatal(err)
	}
	fres, err := m.TranscribeFile(context.Background(), p, o, nil)
	if err != nil || len(fres.Segments) != 0 || len(fres.Skipped) != 1 {
		t.Fatalf("file: %v, %+v", err, fres)
	}
}

// The gated stream hands out exactly the samples inside the regions,
// however the reads fall.
func TestGatedStream(t *testing.T) {
	x := make([]float32, 100000)
	for i := range x {
		x[i] = float32(i%30000) / 30000
	}
	p := filepath.Join(t.TempDir(), "ramp.wav")
	if err := writeWAV(p, x); err != nil {
		t.Fatal(err)
	}
	regs := []vad.Region{{Start: 10, End: 20}, {Start: 16000, End: 48000}, {Start: 48001, End: 48002}, {Start: 99990, End: 100000}}
	s, err := openSamples(p, vad.NewMap(regs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := audio.Decode(p, audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []float32
	for _, r := range regs {
		want = append(want, all[r.Start:r.End]...)
	}
	buf := make([]float32, 7001)
	for {
		n, err := s.Next(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if !slices.Equal(got, want) || s.Pos() != int64(len(want)) {
		t.Fatalf("gated: %d samples (pos %d), want %d", len(got), s.Pos(), len(want))
	}
}

// remap keeps each word whole in the region of its middle, and a segment
// with words spans them; one without words maps its start after a join
// and its end before it, unless it is empty there.
func TestRemapAcrossJoin(t *testing.T) {
	sec := func(s float64) int64 { return int64(s * 16000) }
	// Speech 10..40 s and 100..130 s: the join is at 30 s of speech.
	m := vad.NewMap([]vad.Region{{Start: sec(10), End: sec(40)}, {Start: sec(100), End: sec(130)}})
	s := Segment{Seek: 2900, StartSec: 29, EndSec: 31.5, Words: []Word{
		{Word: " a", StartSec: 29, EndSec: 29.9},   // before the join
		{Word: " b", StartSec: 29.9, EndSec: 30.3}, // across it, middle after: after the silence
		{Word: " c", StartSec: 30.5, EndSec: 31.5},
	}}
	remap(&s, m)
	want := [][2]float64{{39, 39.9}, {99.9, 100.3}, {100.5, 101.5}}
	for i, w := range s.Words {
		if math.Abs(w.StartSec-want[i][0]) > 1e-9 || math.Abs(w.EndSec-want[i][1]) > 1e-9 || w.Start != seconds(w.StartSec) {
			t.Errorf("word %d: %v-%v, want %v", i, w.StartSec, w.EndSec, want[i])
		}
	}
	if s.StartSec != s.Words[0].StartSec || s.EndSec != s.Words[2].EndSec || s.Seek != 3900 {
		t.Errorf("segment %v-%v seek %d", s.StartSec, s.EndSec, s.Seek)
	}
	s = Segment{StartSec: 30, EndSec: 30}
	remap(&s, m)
	if s.StartSec != 100 || s.EndSec != 100 {
		t.Errorf("empty segment at the join: %v-%v", s.StartSec, s.EndSec)
	}
}
