package transcribe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"hark/engine/audio"
	"hark/engine/mel"
	"hark/mlx/mlxtest"
)

// The streamed windows are the whole-file spectrogram's windows bit for
// bit: language detection's first 3000 frames (which reach into the
// padding for short audio), short zero-padded windows, repeated seeks,
// seeks that skip frames never held, and seeks past the audio.
func TestMelStreamMatchesWholeFile(t *testing.T) {
	golden := mlxtest.Assets(t, "whisper", "golden")
	long65 := filepath.Join(golden, "transcribe", "long65.wav")
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	for _, c := range []struct {
		path  string
		nMels int
		seeks [][2]int // seek, size
	}{
		{jfk, 80, [][2]int{{0, 3000}, {0, 1100}, {0, 1100}, {420, 680}, {1099, 1}}},
		{long65, 80, [][2]int{{0, 3000}, {0, 3000}, {2994, 3000}, {5988, 512}}},
		{long65, 128, [][2]int{{0, 3000}, {2756, 3000}, {2757, 3000}, {6400, 100}, {6499, 1}, {6500, 0}, {7000, 3000}}},
	} {
		samples, err := audio.Decode(c.path, audio.Options{})
		if err != nil {
			t.Fatal(err)
		}
		spec, err := mel.LogMelPadded(samples, c.nMels)
		if err != nil {
			t.Fatal(err)
		}
		whole := wholeMel{spec}
		n, maxRaw, err := scanFile(context.Background(), c.path, c.nMels, nil, nil, &Stats{})
		if err != nil || n != int64(len(samples)) {
			t.Fatalf("%s: scan found %d samples (%v), want %d", c.path, n, err, len(samples))
		}
		s, err := openMelStream(c.path, c.nMels, nil, n, maxRaw, &Stats{})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.seeks {
			want, _ := whole.window(w[0], w[1])
			got, err := s.window(w[0], w[1])
			if err != nil {
				t.Fatalf("%s %v: %v", c.path, w, err)
			}
			if got.NMels != want.NMels || got.NFrames != want.NFrames || !slices.Equal(got.Data, want.Data) {
				t.Fatalf("%s, %d mels: window %v differs from the whole-file spectrogram", filepath.Base(c.path), c.nMels, w)
			}
			if held := s.have(); held > 2*mel.NFrames+chunkSamples/mel.HopLength {
				t.Errorf("stream holds %d frames", held)
			}
		}
		if _, err := s.window(c.seeks[len(c.seeks)-1][0]-1, 10); err == nil {
			t.Errorf("%s: a window behind the stream was served", c.path)
		}
		s.Close()
	}
}

// TranscribeFile streams, and gives exactly what Transcribe gives on the
// decoded samples: language detection on a short file, and the golden
// long65 run (three windows, seeks 0, 2994, 5988), which is also checked
// against OpenAI's output.
func TestTranscribeFileMatchesInMemory(t *testing.T) {
	mlxtest.NoLeaks(t)
	golden := mlxtest.Assets(t, "whisper", "golden")
	tdir := filepath.Join(golden, "transcribe")
	m := openGolden(t)
	var runs map[string]goldenRun
	readJSONFile(t, filepath.Join(tdir, "runs.json"), &runs)
	for _, c := range []struct {
		path, golden string
		opt          Options
	}{
		{mlxtest.Assets(t, "audio", "jfk.wav"), "", optionsFor(t, runs["public/jfk_lang_auto.json"].Kwargs)},
		{filepath.Join(tdir, "long65.wav"), "long65_no_condition.json", optionsFor(t, runs["public/long65_no_condition.json"].Kwargs)},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			samples, err := audio.Decode(c.path, audio.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := m.Transcribe(context.Background(), samples, c.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			var segs int
			got, err := m.TranscribeFile(context.Background(), c.path, c.opt, func(Segment) { segs++ })
			if err != nil {
				t.Fatal(err)
			}
			// The same work, timed apart: only the counts must agree.
			gs, ws := got.Stats, want.Stats
			if gs == nil || ws == nil || gs.Windows != ws.Windows || gs.Tokens != ws.Tokens || gs.Fallbacks != ws.Fallbacks {
				t.Errorf("stats: streamed %+v, in memory %+v", gs, ws)
			}
			got.Stats, want.Stats = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("streamed result differs from in-memory:\n got %+v\nwant %+v", got, want)
			}
			if segs != len(got.Segments) || segs == 0 {
				t.Errorf("callback saw %d segments, result has %d", segs, len(got.Segments))
			}
			if c.golden != "" {
				var g goldenResult
				readJSONFile(t, filepath.Join(tdir, c.golden), &g)
				var trace goldenTrace
				readJSONFile(t, filepath.Join(tdir, "long65_no_condition.trace.json"), &trace)
				compareResult(t, got, &g, &trace)
			}
		})
	}
}

// The first pass reports the audio read against the announced length,
// done < total until its last call, which has done == total.
func TestScanProgress(t *testing.T) {
	p := writeNoiseWAV(t, 3)
	type call struct{ done, total time.Duration }
	var calls []call
	n, _, err := scanFile(context.Background(), p, 80, nil, func(d, t time.Duration) { calls = append(calls, call{d, t}) }, &Stats{})
	if err != nil || n != 3*60*mel.SampleRate {
		t.Fatalf("%d samples, %v", n, err)
	}
	if len(calls) != 3 || calls[2] != (call{3 * time.Minute, 3 * time.Minute}) {
		t.Fatalf("calls %v, want a report a minute", calls)
	}
	for _, c := range calls[:2] {
		if c.done >= c.total || c.total != 3*time.Minute {
			t.Errorf("early call %v", c)
		}
	}
}

// Errors name the file once; cancelling stops the first pass; a file that
// changes between the passes is caught rather than floored wrongly.
func TestTranscribeFileErrors(t *testing.T) {
	mlxtest.NoLeaks(t)
	m := openGolden(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "gone.wav")
	_, want := audio.Open(missing, audio.Options{})
	if _, err := m.TranscribeFile(context.Background(), missing, DefaultOptions(), nil); err == nil || err.Error() != want.Error() {
		t.Errorf("missing file: %v, want engine/audio's %v", err, want)
	}
	p := writeNoiseWAV(t, 1)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.wav")
	if err := os.WriteFile(cut, b[:len(b)/2+1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.TranscribeFile(context.Background(), cut, DefaultOptions(), nil); !errors.Is(err, audio.ErrTruncated) || strings.Count(err.Error(), cut) != 1 {
		t.Errorf("truncated file: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.TranscribeFile(ctx, p, DefaultOptions(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	n, maxRaw, err := scanFile(context.Background(), p, 80, nil, nil, &Stats{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wrong := range []int64{n - 1, n + 1} {
		s, err := openMelStream(p, 80, nil, wrong, maxRaw, &Stats{})
		if err != nil {
			t.Fatal(err)
		}
		for seek := 0; err == nil && seek < int(n/mel.HopLength); seek += mel.NFrames {
			_, err = s.window(seek, mel.NFrames)
		}
		if err == nil || !strings.Contains(err.Error(), "changed") {
			t.Errorf("%d samples expected, %d there: %v", wrong, n, err)
		}
		s.Close()
	}
}
