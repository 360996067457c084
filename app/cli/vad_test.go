package cli

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"hark/engine/audio"
	"hark/mlx/mlxtest"
)

// writeWAV16 writes 16 kHz mono s16 samples (exactly, for s16-valued input).
func writeWAV16(t *testing.T, path string, x []float32) {
	t.Helper()
	b := make([]byte, 44+2*len(x))
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*len(x)))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*len(x)))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(int16(math.Round(float64(v)*32768))))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hark audio vad --json on 20 s of silence then jfk: the golden's
// probabilities within 1e-4, and one speech region after the silence.
func TestAudioVADCommand(t *testing.T) {
	jfk, err := audio.Decode(mlxtest.Assets(t, "audio", "jfk.wav"), audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "silence20_jfk.wav")
	writeWAV16(t, p, append(make([]float32, 320000), jfk...))
	code, out, errOut := runCLI(t, "", "audio", "vad", p, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, `{"frame":512,"sample_rate":16000,"speech_probs":[`) {
		t.Fatalf("output starts %.80q", out)
	}
	var got struct {
		SpeechProbs []float64 `json:"speech_probs"`
		Speech      []struct {
			Start, End float64
		} `json:"speech"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var golden struct {
		SpeechProbs []float64 `json:"speech_probs"`
	}
	b, err := os.ReadFile(mlxtest.Assets(t, "vad", "golden", "silence20_jfk.wav.vad.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(got.SpeechProbs) != len(golden.SpeechProbs) {
		t.Fatalf("%d probabilities, golden %d", len(got.SpeechProbs), len(golden.SpeechProbs))
	}
	for i := range got.SpeechProbs {
		if math.Abs(got.SpeechProbs[i]-golden.SpeechProbs[i]) > 1e-4 {
			t.Fatalf("frame %d: %v, golden %v", i, got.SpeechProbs[i], golden.SpeechProbs[i])
		}
	}
	if len(got.Speech) != 1 || got.Speech[0].Start < 19.9 || got.Speech[0].End != 31 {
		t.Fatalf("speech %+v, want one region from ~19.95 s to 31 s", got.Speech)
	}
}

func TestTranscribeVADFlags(t *testing.T) {
	env := &Env{Stdout: new(strings.Builder), Stderr: new(strings.Builder)}
	f, err := parseTranscribeFlags(env, []string{"a.wav", "--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	if o := f.options(); o.VAD == nil || o.VAD.Threshold != 0.5 || o.VAD.MinSilenceMs != 2000 || o.VAD.SpeechPadMs != 400 {
		t.Fatalf("default VAD %+v", o.VAD)
	}
	f, err = parseTranscribeFlags(env, []string{"a.wav", "--model", "m", "--no-vad"})
	if err != nil || f.options().VAD != nil {
		t.Fatalf("--no-vad: %v %+v", err, f.options().VAD)
	}
	f, err = parseTranscribeFlags(env, []string{"a.wav", "--model", "m", "--vad=false"})
	if err != nil || f.options().VAD != nil {
		t.Fatalf("--vad=false: %v", err)
	}
	f, err = parseTranscribeFlags(env, []string{"--vad-threshold", "0.7", "a.wav", "--model", "m", "--vad-min-silence-ms", "500"})
	if err != nil || f.options().VAD.Threshold != 0.7 || f.options().VAD.MinSilenceMs != 500 {
		t.Fatalf("thresholds: %v", err)
	}
	if _, err := parseTranscribeFlags(env, []string{"a.wav", "--model", "m", "--vad-threshold", "1.2"}); err == nil || !strings.Contains(err.Error(), "threshold") {
		t.Fatalf("threshold 1.2: %v", err)
	}
}

// A FIFO or a device is refused by name, not read.
func TestTranscribeRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.wav")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{fifo: "named pipe", "/dev/zero": "device"} {
		if err := checkInputFile(path); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", path, err)
		}
		code, _, errOut := runCLI(t, "", "audio", "vad", path)
		if code == ExitOK || !strings.Contains(errOut, want) {
			t.Errorf("audio vad %s: exit %d, %q", path, code, errOut)
		}
		if d := mlxtest.AssetsDir(); d != "" {
			code, _, errOut = runCLI(t, "", "transcribe", path, "--model", filepath.Join(d, "whisper", "golden", "model"))
			if code == ExitOK || !strings.Contains(errOut, want) {
				t.Errorf("transcribe %s: exit %d, %q", path, code, errOut)
			}
		}
	}
}

func TestTranscribeWordCueFlags(t *testing.T) {
	env := &Env{Stdout: new(strings.Builder), Stderr: new(strings.Builder)}
	f, err := parseTranscribeFlags(env, []string{"a.wav", "--model", "m", "--format", "vtt", "--word-cues", "karaoke"})
	if err != nil || !f.options().WordTimestamps {
		t.Fatalf("karaoke vtt: %v", err)
	}
	for _, bad := range [][]string{
		{"--format", "srt", "--word-cues", "karaoke"},
		{"--format", "txt", "--word-cues", "word"},
		{"--format", "vtt", "--word-cues", "syllable"},
	} {
		if _, err := parseTranscribeFlags(env, append([]string{"a.wav", "--model", "m"}, bad...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
