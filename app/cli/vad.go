package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"

	"hark/engine/transcribe"
	"hark/engine/vad"
)

// vadFlags are the VAD switches shared by transcribe and audio vad, with
// faster-whisper's VadOptions defaults.
type vadFlags struct {
	on, off bool
	o       vad.Options
}

func addVADFlags(fs *flag.FlagSet, withSwitch bool) *vadFlags {
	v := &vadFlags{o: vad.DefaultOptions()}
	if withSwitch {
		fs.BoolVar(&v.on, "vad", true, "decode only the speech Silero VAD finds (default on; --no-vad decodes everything)")
		fs.BoolVar(&v.off, "no-vad", false, "decode the whole recording, silence included (as OpenAI's whisper does)")
	}
	fs.Float64Var(&v.o.Threshold, "vad-threshold", v.o.Threshold, "VAD: a frame scoring at least this is speech")
	fs.Float64Var(&v.o.NegThreshold, "vad-neg-threshold", 0, "VAD: inside speech, a frame below this is silence (default threshold-0.15)")
	fs.IntVar(&v.o.MinSpeechMs, "vad-min-speech-ms", v.o.MinSpeechMs, "VAD: drop speech regions this short")
	fs.IntVar(&v.o.MinSilenceMs, "vad-min-silence-ms", v.o.MinSilenceMs, "VAD: silence must last this long to end a region")
	fs.IntVar(&v.o.SpeechPadMs, "vad-pad-ms", v.o.SpeechPadMs, "VAD: widen each speech region by this much on both sides")
	fs.Float64Var(&v.o.MaxSpeechSec, "vad-max-speech-s", 0, "VAD: split speech regions longer than this (default: no limit)")
	return v
}

// options is nil when VAD is off.
func (v *vadFlags) options() (*vad.Options, error) {
	if v.off || !v.on {
		return nil, nil
	}
	if err := v.o.Check(); err != nil {
		return nil, Usagef("%v", err)
	}
	o := v.o
	return &o, nil
}

// vadOutput is what `hark audio vad --json` prints.
type vadOutput struct {
	Frame       int         `json:"frame"`
	SampleRate  int         `json:"sample_rate"`
	SpeechProbs []float32   `json:"speech_probs"`
	Speech      []vadRegion `json:"speech"`
	File        string      `json:"file"`
	Samples     int64       `json:"samples"`
	Options     vad.Options `json:"options"`
}

type vadRegion struct {
	Start       float64 `json:"start"`
	End         float64 `json:"end"`
	StartSample int64   `json:"start_sample"`
	EndSample   int64   `json:"end_sample"`
}

func runAudioVAD(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "audio vad")
	asJSON := fs.Bool("json", false, "print the per-frame speech probabilities and the regions as JSON")
	vf := addVADFlags(fs, false)
	var files []string
	for rest := args; ; {
		if err := Parse(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) == 0 {
		return Usagef("no files given")
	}
	if err := vf.o.Check(); err != nil {
		return Usagef("%v", err)
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, path := range files {
		if err := checkInputFile(path); err != nil {
			return err
		}
		probs, regions, n, err := transcribe.SpeechRegions(ctx, path, vf.o, nil)
		if err != nil {
			return fmt.Errorf("%s", describeAudioError(path, err))
		}
		res := vadOutput{File: path, Frame: vad.Frame, SampleRate: vad.SampleRate, Samples: n, Options: vf.o, SpeechProbs: probs, Speech: []vadRegion{}}
		if res.Options.NegThreshold == 0 {
			res.Options.NegThreshold = math.Max(res.Options.Threshold-0.15, 0.01)
		}
		for _, r := range regions {
			res.Speech = append(res.Speech, vadRegion{Start: float64(r.Start) / vad.SampleRate, End: float64(r.End) / vad.SampleRate, StartSample: r.Start, EndSample: r.End})
		}
		if *asJSON {
			if err := enc.Encode(res); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "%s: %d frames, %d speech regions\n", path, len(probs), len(regions))
		for _, r := range res.Speech {
			fmt.Fprintf(out, "  %s - %s\n", stamp(r.Start), stamp(r.End))
		}
	}
	return nil
}

// checkInputFile refuses what is not a regular file before any model is
// touched: transcription reads a file more than once (the spectrogram's
// maximum first), which a pipe or a device cannot give.
func checkInputFile(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s", describeAudioError(path, err))
	case st.IsDir():
		return fmt.Errorf("%s: is a folder, not an audio file", path)
	case st.Mode()&os.ModeNamedPipe != 0:
		return fmt.Errorf("%s: is a named pipe (FIFO), not a file: Hark reads a recording more than once, so save the stream to a file first", path)
	case st.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0:
		return fmt.Errorf("%s: is a device, not an audio file; record to a file first", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: is not a regular file (%v)", path, st.Mode().Type())
	}
	return nil
}

func stamp(sec float64) string {
	ms := int64(math.Round(sec * 1000))
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
