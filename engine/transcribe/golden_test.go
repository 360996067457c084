package transcribe

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/engine/audio"
	"hark/engine/mel"
	"hark/mlx/mlxtest"
)

type goldenRun struct {
	Model    string         `json:"model"`
	ModelDir string         `json:"model_dir"`
	Audio    string         `json:"audio"`
	Kwargs   map[string]any `json:"kwargs"`
}

type goldenResult struct {
	Text     string `json:"text"`
	Language string `json:"language"`
	Segments []struct {
		ID               int     `json:"id"`
		Seek             int     `json:"seek"`
		Start            float64 `json:"start"`
		End              float64 `json:"end"`
		Text             string  `json:"text"`
		Tokens           []int   `json:"tokens"`
		Temperature      float64 `json:"temperature"`
		AvgLogprob       float64 `json:"avg_logprob"`
		CompressionRatio float64 `json:"compression_ratio"`
		NoSpeechProb     float64 `json:"no_speech_prob"`
	} `json:"segments"`
}

type goldenTrace struct {
	LanguageDetection *struct {
		ArgmaxCode string  `json:"argmax_code"`
		Top5       [][]any `json:"top5"`
	} `json:"language_detection"`
	Windows []struct {
		Seek              int `json:"seek"`
		TextUTF8Len       int `json:"text_utf8_len"`
		ZlibCompressedLen int `json:"zlib_compressed_len"`
	} `json:"windows"`
}

func readJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// goldenAudio returns the samples a run used: jfk from the mel golden's
// exact decode, long65 through engine/audio (a 16 kHz s16 WAV, so the
// decode is lossless as in OpenAI's ffmpeg path).
func goldenAudio(t *testing.T, golden, name string) []float32 {
	t.Helper()
	switch {
	case strings.HasSuffix(name, "jfk.wav"):
		f, err := os.Open(filepath.Join(golden, "mel", "jfk_wav.audio16k.npy"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		a, err := mel.ReadNPY(f)
		if err != nil {
			t.Fatal(err)
		}
		return a.Data
	case name == "long65.wav":
		s, err := audio.Decode(filepath.Join(golden, "transcribe", "long65.wav"), audio.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 1040000 {
			t.Fatalf("long65.wav decoded to %d samples", len(s))
		}
		return s
	}
	t.Fatalf("unknown golden audio %q", name)
	return nil
}

// optionsFor maps a run's transcribe() kwargs onto Options.
func optionsFor(t *testing.T, kw map[string]any) Options {
	o := DefaultOptions()
	for k, v := range kw {
		switch k {
		case "temperature":
			o.Temperatures = []float64{v.(float64)}
		case "language":
			o.Language, _ = v.(string)
		case "task":
			o.Task = v.(string)
		case "condition_on_previous_text":
			o.ConditionOnPreviousText = v.(bool)
		case "initial_prompt":
			o.InitialPrompt = v.(string)
		case "word_timestamps":
			o.WordTimestamps = v.(bool)
		case "verbose", "fp16":
		default:
			t.Fatalf("golden run uses unhandled kwarg %s", k)
		}
	}
	return o
}

// defaultGoldenRuns cover every variant (language detection, translate,
// initial prompt, no conditioning, conditioning, the second model and its
// short seek; app/cli's test runs public/jfk) within the test time budget
// of a busy shared machine. HARK_WHISPER_ALL_GOLDEN=1 runs all twelve
// (about 30 s on an idle 2-core machine, all passing), the long65 ones a
// second time through TranscribeFile's streamed path.
var defaultGoldenRuns = []string{
	"public/jfk_lang_auto.json", "public/jfk_translate.json",
	"public/long65_initial_prompt.json", "public/long65_no_condition.json",
	"varied/long65_initial_prompt.json",
}

func TestTranscribeMatchesOpenAI(t *testing.T) {
	mlxtest.NoLeaks(t)
	golden := mlxtest.Assets(t, "whisper", "golden")
	tdir := filepath.Join(golden, "transcribe")
	var runs map[string]goldenRun
	readJSONFile(t, filepath.Join(tdir, "runs.json"), &runs)
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	models := map[string]*Model{}
	defer func() {
		for _, m := range models {
			m.Close()
		}
	}()
	all := os.Getenv("HARK_WHISPER_ALL_GOLDEN") != ""
	ran := 0
	for _, key := range keys {
		run := runs[key]
		var file string
		switch {
		case strings.HasPrefix(key, "public/"):
			file = filepath.Join(tdir, strings.TrimPrefix(key, "public/"))
		case strings.HasPrefix(key, "varied/"):
			file = filepath.Join(tdir, key)
		default:
			continue // the held-out model is not shipped
		}
		if !all && !slices.Contains(defaultGoldenRuns, key) {
			continue
		}
		t.Run(key, func(t *testing.T) {
			m := models[run.ModelDir]
			if m == nil {
				var err error
				if m, err = Open(filepath.Join(golden, strings.TrimPrefix(run.ModelDir, "golden/"))); err != nil {
					t.Fatal(err)
				}
				models[run.ModelDir] = m
			}
			var want goldenResult
			readJSONFile(t, file, &want)
			var trace goldenTrace
			readJSONFile(t, strings.TrimSuffix(file, ".json")+".trace.json", &trace)
			samples := goldenAudio(t, golden, run.Audio)
			var streamed int
			got, err := m.Transcribe(context.Background(), samples, optionsFor(t, run.Kwargs), func(Segment) { streamed++ })
			if err != nil {
				t.Fatal(err)
			}
			compareResult(t, got, &want, &trace)
			if streamed != len(got.Segments) {
				t.Errorf("callback saw %d segments, result has %d", streamed, len(got.Segments))
			}
			// The full set also checks the streamed path on every run of
			// the file engine/audio decodes (jfk's samples come from an npy).
			if all && run.Audio == "long65.wav" {
				got, err := m.TranscribeFile(context.Background(), filepath.Join(tdir, run.Audio), optionsFor(t, run.Kwargs), nil)
				if err != nil {
					t.Fatal(err)
				}
				compareResult(t, got, &want, &trace)
			}
		})
		ran++
	}
	if ran < len(defaultGoldenRuns) {
		t.Fatalf("only %d golden runs found", ran)
	}
}

func compareResult(t *testing.T, got *Result, want *goldenResult, trace *goldenTrace) {
	t.Helper()
	if got.Language != want.Language {
		t.Errorf("language %q, want %q", got.Language, want.Language)
	}
	if ld := trace.LanguageDetection; ld != nil {
		for _, e := range ld.Top5 {
			code, p := e[0].(string), e[1].(float64)
			if math.Abs(got.LanguageProbs[code]-p) > 1e-6 {
				t.Errorf("P(%s) = %v, want %v", code, got.LanguageProbs[code], p)
			}
		}
	}
	if len(got.Segments) != len(want.Segments) {
		t.Errorf("%d segments, want %d", len(got.Segments), len(want.Segments))
	}
	for i := range min(len(got.Segments), len(want.Segments)) {
		g, w := got.Segments[i], want.Segments[i]
		if g.ID != w.ID || g.Seek != w.Seek || g.StartSec != w.Start || g.EndSec != w.End || g.Text != w.Text || !slices.Equal(g.Tokens, w.Tokens) {
			t.Fatalf("segment %d:\n got id %d seek %d %v-%v %q %v\nwant id %d seek %d %v-%v %q %v", i,
				g.ID, g.Seek, g.StartSec, g.EndSec, g.Text, g.Tokens, w.ID, w.Seek, w.Start, w.End, w.Text, w.Tokens)
		}
		if g.Temperature != w.Temperature {
			t.Errorf("segment %d: temperature %v, want %v", i, g.Temperature, w.Temperature)
		}
		if math.Abs(g.AvgLogprob-w.AvgLogprob) > 1e-4 {
			t.Errorf("segment %d: avg_logprob %v, want %v", i, g.AvgLogprob, w.AvgLogprob)
		}
		if math.Abs(g.NoSpeechProb-w.NoSpeechProb) > 1e-6 {
			t.Errorf("segment %d: no_speech_prob %v, want %v", i, g.NoSpeechProb, w.NoSpeechProb)
		}
		if g.CompressionRatio != w.CompressionRatio {
			t.Errorf("segment %d: compression ratio %v, want %v", i, g.CompressionRatio, w.CompressionRatio)
		}
	}
	if got.Text != want.Text {
		t.Errorf("text:\n got %q\nwant %q", got.Text, want.Text)
	}
}
