package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"hark/engine"
	"hark/engine/audio"
	"hark/engine/transcribe"
	"hark/library"
)

// transcribeCommand is hark transcribe, listed by Commands.
func transcribeCommand() Command {
	return Command{
		Name: "transcribe",
		Usage: "hark transcribe FILE... --model ID [--language xx] [--task translate] [--format txt|srt|vtt|json] " +
			"[-o DIR] [--beam N] [--temperature T | --temperatures T1,T2...] [--no-speech-threshold P] [--logprob-threshold L] " +
			"[--compression-ratio-threshold R] [--initial-prompt TEXT] [--word-timestamps] [--word-cues word|karaoke] [--no-vad] [--vad-threshold P] [--stats]",
		Summary: "transcribe audio files with a Whisper model (ID: model folder, fingerprint or org/repo)",
		Run:     runTranscribe,
	}
}

type transcribeFlags struct {
	model, language, task, format, outDir, prompt string
	wordCues                                      string
	force                                         bool
	written                                       map[string]bool // outputs of this run
	beam                                          int
	temperature                                   float64
	words                                         bool
	stats                                         bool
	load                                          time.Duration // model load, for --stats
	files                                         []string
	vad                                           *vadFlags
	temperatures                                  string
	noSpeech, logProb, compression                float64
}

func parseTranscribeFlags(env *Env, args []string) (*transcribeFlags, error) {
	f := &transcribeFlags{written: map[string]bool{}}
	fs := NewFlagSet(env, "transcribe")
	fs.StringVar(&f.model, "model", "", "Whisper model: a folder, a fingerprint (hf:org/repo@commit) or org/repo")
	fs.StringVar(&f.language, "language", "", "spoken language code or name (default: detect)")
	fs.StringVar(&f.task, "task", "transcribe", "transcribe, or translate (to English)")
	fs.StringVar(&f.format, "format", "txt", "output format: "+strings.Join(transcribe.Formats, ", "))
	fs.StringVar(&f.outDir, "o", "", "write FILE's transcript to DIR/NAME.FORMAT, or NAME (2).FORMAT if that exists (default: standard output)")
	fs.BoolVar(&f.force, "force", false, "with -o, replace an existing NAME.FORMAT instead of writing NAME (2).FORMAT")
	fs.IntVar(&f.beam, "beam", 0, "beam search with N beams (default: greedy)")
	fs.Float64Var(&f.temperature, "temperature", -1, "decode at this single temperature, without fallback (default: 0, 0.2 ... 1.0 with fallback)")
	def := transcribe.DefaultOptions()
	fs.StringVar(&f.temperatures, "temperatures", "", "fallback schedule, e.g. 0,0.2,0.4: a doubtful window is decoded again at the next one (default: 0,0.2,0.4,0.6,0.8,1)")
	fs.Float64Var(&f.noSpeech, "no-speech-threshold", def.NoSpeechThreshold, "a window more likely silence than this (and improbable) is skipped")
	fs.Float64Var(&f.logProb, "logprob-threshold", def.LogProbThreshold, "retry a window whose average token log probability is below this")
	fs.Float64Var(&f.compression, "compression-ratio-threshold", def.CompressionRatioThreshold, "retry a window whose text compresses better than this (repetition)")
	fs.StringVar(&f.prompt, "initial-prompt", "", "text that conditions the first window (names, spelling)")
	fs.BoolVar(&f.words, "word-timestamps", false, "time each word (json output lists them)")
	fs.BoolVar(&f.stats, "stats", false, "print the time of each stage (load, audio, mel, encoder per window, decoder per token...) and the peak memory to standard error")
	f.vad = addVADFlags(fs, true)
	fs.StringVar(&f.wordCues, "word-cues", "", "subtitles per word: word (one srt/vtt cue per word) or karaoke (vtt <c> timing); implies --word-timestamps")
	// Flags may follow the files: parse, take one positional, repeat.
	rest := args
	for {
		if err := Parse(fs, rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		f.files = append(f.files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case len(f.files) == 0:
		return nil, Usagef("no audio files given")
	case f.model == "":
		return nil, Usagef("--model is required")
	case !slices.Contains(transcribe.Formats, f.format):
		return nil, Usagef("--format %q: want one of %s", f.format, strings.Join(transcribe.Formats, ", "))
	case f.task != "transcribe" && f.task != "translate":
		return nil, Usagef("--task %q: want transcribe or translate", f.task)
	case f.beam < 0:
		return nil, Usagef("--beam must be positive")
	case f.temperature > 1 || (f.temperature < 0 && f.temperature != -1):
		return nil, Usagef("--temperature must be between 0 and 1")
	}
	if _, err := f.vad.options(); err != nil {
		return nil, err
	}
	if f.temperatures != "" {
		if f.temperature != -1 {
			return nil, Usagef("give --temperature (one, no fallback) or --temperatures (a schedule), not both")
		}
		if _, err := transcribe.ParseTemperatures(f.temperatures); err != nil {
			return nil, Usagef("--temperatures: %v", err)
		}
	}
	if err := transcribe.CheckThresholds(f.noSpeech, f.logProb, f.compression); err != nil {
		return nil, Usagef("%v", err)
	}
	if f.wordCues != "" {
		switch {
		case !slices.Contains(transcribe.WordCues, f.wordCues):
			return nil, Usagef("--word-cues %q: want %s", f.wordCues, strings.Join(transcribe.WordCues, " or "))
		case f.format != "srt" && f.format != "vtt":
			return nil, Usagef("--word-cues needs --format srt or vtt")
		case f.wordCues == "karaoke" && f.format != "vtt":
			return nil, Usagef("--word-cues karaoke needs --format vtt (WebVTT's timestamp tags)")
		}
		f.words = true
	}
	return f, nil
}

func (f *transcribeFlags) options() transcribe.Options {
	o := transcribe.DefaultOptions()
	o.Language, o.Task, o.InitialPrompt, o.BeamSize = f.language, f.task, f.prompt, f.beam
	o.WordTimestamps = f.words
	o.VAD, _ = f.vad.options() // checked when parsed
	if f.temperature >= 0 {
		o.Temperatures = []float64{f.temperature}
	}
	if f.temperatures != "" {
		o.Temperatures, _ = transcribe.ParseTemperatures(f.temperatures) // checked when parsed
	}
	o.NoSpeechThreshold, o.LogProbThreshold, o.CompressionRatioThreshold = f.noSpeech, f.logProb, f.compression
	return o
}

func runTranscribe(ctx context.Context, env *Env, args []string) error {
	f, err := parseTranscribeFlags(env, args)
	if err != nil {
		return err
	}
	dir, err := resolveModelDir(ctx, f.model)
	if err != nil {
		return err
	}
	t0 := time.Now()
	m, err := transcribe.Open(dir)
	if err != nil {
		return fmt.Errorf("load model %s: %w", f.model, err)
	}
	f.load = time.Since(t0)
	defer m.Close()
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return fmt.Errorf("create output folder: %w", err)
		}
	}
	failed := 0
	for _, path := range f.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := transcribeOne(ctx, env, m, f, path); err != nil {
			failed++
			fmt.Fprintf(env.Stderr, "hark transcribe: %s\n", describeAudioError(path, err))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files failed", failed, len(f.files))
	}
	return nil
}

// resolveModelDir accepts a model folder directly, and otherwise asks the
// library (fingerprint, org/repo, indexed path).
func resolveModelDir(ctx context.Context, id string) (string, error) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return id, nil
	}
	lib, db, err := openLibrary(ctx)
	if err != nil {
		return "", fmt.Errorf("model %q is not a folder, and the library is unavailable: %w", id, err)
	}
	defer db.Close()
	mod, err := lib.Resolve(ctx, id)
	if errors.Is(err, library.ErrNotFound) {
		return "", fmt.Errorf("model %q not found: give a Whisper model folder, or an ID from 'hark models'", id)
	}
	if err != nil {
		return "", err
	}
	return mod.Path, nil
}

func transcribeOne(ctx context.Context, env *Env, m *transcribe.Model, f *transcribeFlags, path string) error {
	if err := checkInputFile(path); err != nil {
		return err
	}
	bar := newAudioProgress(env.Stderr, filepath.Base(path))
	opt := f.options()
	opt.Progress = bar.update
	opt.ScanProgress = func(done, total time.Duration) {
		if done >= total {
			bar.restart() // the file was read once first: time decoding only
		}
	}
	res, err := m.TranscribeFile(ctx, path, opt, nil)
	bar.done()
	if err != nil {
		return err
	}
	if f.stats && res.Stats != nil {
		fmt.Fprintf(env.Stderr, "%s: %s of audio\n", filepath.Base(path), res.Duration.Round(time.Millisecond))
		fmt.Fprintf(env.Stderr, "model load            %9.1f ms\n", float64(f.load)/float64(time.Millisecond))
		res.Stats.Write(env.Stderr)
		if rss := peakRSS(); rss > 0 {
			// In the unit the Library and the fit verdict use (MB = 10^6).
			fmt.Fprintf(env.Stderr, "peak RSS              %12s\n", engine.FormatBytes(rss))
		}
	}
	var w io.Writer = env.Stdout
	if f.outDir != "" {
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		out, err := createOutput(f.outDir, base, "."+f.format, f.force, f.written)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer out.Close()
		if want := filepath.Join(f.outDir, base+"."+f.format); out.Name() != want {
			fmt.Fprintf(env.Stderr, "hark transcribe: %s exists; writing %s\n", want, out.Name())
		}
		w = out
		if err := transcribe.WriteWith(w, f.format, res, transcribe.WriteOptions{Words: f.wordCues}); err != nil {
			return fmt.Errorf("%s: write %s: %w", path, out.Name(), err)
		}
		return out.Close()
	}
	return transcribe.WriteWith(w, f.format, res, transcribe.WriteOptions{Words: f.wordCues})
}

// describeAudioError keeps engine/audio's messages (they name the file and
// the problem) and makes the few generic ones explicit.
func describeAudioError(path string, err error) string {
	switch {
	case errors.Is(err, transcribe.ErrNoAudio), errors.Is(err, audio.ErrEmpty):
		return fmt.Sprintf("%s: the file holds no audio (zero length)", path)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("%s: no such file", path)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) {
		msg = path + ": " + msg
	}
	return msg
}

// audioProgress shows how much of a file's audio is transcribed: a bar
// with percentage and ETA on a terminal, a plain line per step otherwise.
type audioProgress struct {
	w     io.Writer
	label string
	tty   bool
	start time.Time
	mu    sync.Mutex
	drawn bool
}

func newAudioProgress(w io.Writer, label string) *audioProgress {
	return &audioProgress{w: w, label: label, tty: isTerminal(w), start: time.Now()}
}

// restart times the ETA from now on.
func (p *audioProgress) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = time.Now()
}

func (p *audioProgress) update(done, total time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pct := 1.0
	if total > 0 {
		pct = min(float64(done)/float64(total), 1)
	}
	var b strings.Builder
	b.WriteString(p.label)
	if p.tty {
		const width = 24
		n := int(pct * width)
		fmt.Fprintf(&b, " [%s%s]", strings.Repeat("=", n), strings.Repeat(" ", width-n))
	}
	fmt.Fprintf(&b, " %3.0f%% %s/%s", pct*100, clock(done), clock(total))
	if el := time.Since(p.start); done > 0 && done < total {
		if eta := time.Duration(float64(el) * float64(total-done) / float64(done)); eta >= time.Second {
			fmt.Fprintf(&b, " ETA %s", eta.Round(time.Second))
		}
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", b.String())
		p.drawn = true
	} else {
		fmt.Fprintln(p.w, b.String())
	}
}

func (p *audioProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// clock formats an audio position as M:SS or H:MM:SS.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
