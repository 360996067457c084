package vad

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"hark/engine/audio"
	"hark/mlx/mlxtest"
)

type golden struct {
	Clip        string    `json:"clip"`
	SampleRate  int       `json:"sample_rate"`
	Frame       int       `json:"frame"`
	Context     int       `json:"context"`
	Samples     int       `json:"samples"`
	Frames      int       `json:"frames"`
	SpeechProbs []float64 `json:"speech_probs"`
}

func readGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vadAssets(t), "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func vadAssets(t testing.TB) string {
	d := mlxtest.AssetsDir()
	if d == "" {
		t.Skip("../shared/assets is absent: no Silero goldens to compare with")
	}
	return filepath.Join(d, "vad")
}

// goldenAudio decodes the input each golden was made from, as its README
// describes.
func goldenAudio(t *testing.T, name string) []float32 {
	t.Helper()
	root := filepath.Dir(vadAssets(t))
	dec := func(p string, opt audio.Options) []float32 {
		x, err := audio.Decode(filepath.Join(root, p), opt)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	switch name {
	case "jfk.wav.vad.json":
		return dec("audio/jfk.wav", audio.Options{})
	case "ls_test.flac.vad.json":
		return dec("audio/ls_test.flac", audio.Options{})
	case "stereo_diarization.left.wav.vad.json":
		return dec("audio/stereo_diarization.wav", audio.Options{Channel: 1}) // 1 = the left channel alone
	case "silence20_jfk.wav.vad.json":
		return append(make([]float32, 320000), dec("audio/jfk.wav", audio.Options{})...)
	}
	t.Fatalf("no input known for %s", name)
	return nil
}

var goldens = []string{"jfk.wav.vad.json", "ls_test.flac.vad.json", "stereo_diarization.left.wav.vad.json", "silence20_jfk.wav.vad.json"}

func TestGoldenProbs(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name)
			x := goldenAudio(t, name)
			if len(x) != g.Samples {
				t.Fatalf("decoded %d samples, the golden has %d", len(x), g.Samples)
			}
			p := Probs(m, x)
			if len(p) != g.Frames || len(p) != len(g.SpeechProbs) {
				t.Fatalf("%d frames, want %d", len(p), g.Frames)
			}
			worst, at := 0.0, 0
			for i := range p {
				if d := math.Abs(float64(p[i]) - g.SpeechProbs[i]); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%s: %d frames, max |diff| %.3g at frame %d", name, len(p), worst, at)
			if worst > 1e-4 {
				t.Errorf("frame %d: %v, golden %v (|diff| %.3g > 1e-4)", at, p[at], g.SpeechProbs[at], worst)
			}
		})
	}
}
