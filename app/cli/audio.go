package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"hark/engine/audio"
)

func init() {
	Register(Command{
		Name:    "audio",
		Usage:   "hark audio info FILE... | hark audio vad FILE... [--json] [--vad-threshold P ...]",
		Summary: "describe audio files as JSON lines (info), or find their speech with Silero VAD (vad)",
		Run:     runAudio,
	})
}

func runAudio(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("missing subcommand (info, vad)")
	}
	switch args[0] {
	case "info":
		return runAudioInfo(ctx, env, args[1:])
	case "vad":
		return runAudioVAD(ctx, env, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(env.Stdout, "usage: hark audio info FILE...\n       hark audio vad FILE... [--json] [--vad-threshold P] [--vad-min-silence-ms MS] ...")
		return nil
	}
	return Usagef("unknown subcommand %q (want info or vad)", args[0])
}

// audioInfoError is the line printed for a file that cannot be read.
type audioInfoError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// runAudioInfo prints one JSON object per file, in argument order, and
// fails (exit 1) when any file could not be read, after printing them all.
func runAudioInfo(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "audio info")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return Usagef("no files given")
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	failed := 0
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		in, err := audio.Info(path)
		var line any = in
		if err != nil {
			failed++
			// The "file" field already names the file; keep the message
			// to what is wrong with it.
			msg := err.Error()
			var fe *audio.FileError
			if errors.As(err, &fe) {
				msg = fe.Err.Error()
			}
			line = audioInfoError{File: path, Error: msg}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be read", failed, fs.NArg())
	}
	return nil
}
