package mel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Streaming the audio through a Framer in random pieces and normalising
// with its maximum gives exactly LogMel's spectrogram, with transcribe's
// 30 s padding and without it (where the last frames reflect real audio).
func TestFramerMatchesLogMel(t *testing.T) {
	audio := readGolden(t, "jfk_wav.audio16k.npy").Data
	rng := rand.New(rand.NewPCG(5, 6))
	for _, padding := range []int{NSamples, 0, 77} {
		want, err := LogMel(audio, 80, padding)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFramer(80)
		if err != nil {
			t.Fatal(err)
		}
		var raw []float32
		raw = f.Push(audio[:200], raw) // a first piece shorter than a frame
		for rest := audio[200:]; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(9000))
			raw = f.Push(rest[:k], raw)
			rest = rest[k:]
		}
		if raw, err = f.Finish(padding, raw); err != nil {
			t.Fatal(err)
		}
		got, err := Normalize(raw, 80, f.Max())
		if err != nil {
			t.Fatal(err)
		}
		if got.NFrames != want.NFrames || f.Frames() != int64(want.NFrames) {
			t.Fatalf("padding %d: %d frames, LogMel has %d", padding, got.NFrames, want.NFrames)
		}
		if !slices.Equal(got.Data, want.Data) {
			t.Fatalf("padding %d: streamed spectrogram differs from LogMel", padding)
		}
		// Pieces are at most 9000 samples; the audio is 176000.
		if len(f.buf) > 4*9000 {
			t.Errorf("framer holds %d samples: it must not keep the whole input", len(f.buf))
		}
	}
}

// A window built from a slice of raw frames is the whole-file padded
// spectrogram's Segment, for full, short and empty windows.
func TestNormalizeWindowMatchesSegment(t *testing.T) {
	audio := readGolden(t, "jfk_wav.audio16k.npy").Data
	want, err := LogMelPadded(audio, 80)
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFramer(80)
	if err != nil {
		t.Fatal(err)
	}
	raw := f.Push(audio, nil)
	if raw, err = f.Finish(NSamples, raw); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]int{{0, NFrames}, {0, 1100}, {37, 1063}, {1099, 1}, {500, 0}, {100, NFrames + 50}} {
		seek, size := c[0], c[1]
		end := min(seek+size, int(f.Frames()))
		got, err := NormalizeWindow(raw[seek*80:end*80], 80, f.Max())
		if err != nil {
			t.Fatal(err)
		}
		if w := want.Segment(seek, size); got.NFrames != NFrames || !slices.Equal(got.Data, w.Data) {
			t.Errorf("window %d+%d differs from Segment", seek, size)
		}
	}
	if _, err := NormalizeWindow(make([]float32, 81), 80, 0); err == nil {
		t.Error("ragged raw frames accepted")
	}
}
