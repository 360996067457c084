package audio

import (
	"io"
	"slices"
	"testing"

	"hark/engine/mel"
	"hark/mlx/mlxtest"
)

// The streaming front end (Stream -> mel.Framer, 30 s at a time, two passes
// for the exact maximum) produces exactly the spectrogram transcribe()
// builds from the whole file: here the 65 s three-window golden input.
func TestStreamToMelMatchesWholeFile(t *testing.T) {
	p := mlxtest.Assets(t, "whisper", "golden", "transcribe", "long65.wav")
	whole, err := Decode(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := mel.LogMelPadded(whole, 80)
	if err != nil {
		t.Fatal(err)
	}
	stream := func() ([]float32, float64) {
		s, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f, err := mel.NewFramer(80)
		if err != nil {
			t.Fatal(err)
		}
		win := make([]float32, mel.NSamples)
		var raw []float32
		for {
			n, err := s.Next(win)
			raw = f.Push(win[:n], raw)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		raw, err = f.Finish(mel.NSamples, raw)
		if err != nil {
			t.Fatal(err)
		}
		return raw, f.Max()
	}
	_, maxRaw := stream() // pass 1: the maximum only
	raw, _ := stream()
	got, err := mel.Normalize(raw, 80, maxRaw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Data {
		if got.Data[i] != want.Data[i] {
			t.Logf("first diff at mel %d frame %d: %v vs %v", i/got.NFrames, i%got.NFrames, got.Data[i], want.Data[i])
			break
		}
	}
	if got.NFrames != want.NFrames || !slices.Equal(got.Data, want.Data) {
		t.Fatalf("streamed mel (%d frames) differs from the whole-file mel (%d frames)", got.NFrames, want.NFrames)
	}
}
