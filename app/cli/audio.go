package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"hark/engine/audio"
)

// audioCommand is hark audio, listed by Commands.
func audioCommand() Command {
	return Command{
		Name:    "audio",
		Usage:   "hark audio info FILE... | hark audio vad FILE... [--json] [--vad-threshold P ...] | hark audio formats [--json]",
		Summary: "describe audio files as JSON lines (info), find their speech with Silero VAD (vad), or list the formats Hark reads",
		Run:     runAudio,
	}
}

func runAudio(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("missing subcommand (info, vad or formats)")
	}
	switch args[0] {
	case "info":
		return runAudioInfo(ctx, env, args[1:])
	case "vad":
		return runAudioVAD(ctx, env, args[1:])
	case "formats":
		return runAudioFormats(env, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(env.Stdout, "usage: hark audio info FILE...\n       hark audio vad FILE... [--json] [--vad-threshold P] [--vad-min-silence-ms MS] ...\n       hark audio formats [--json]")
		return nil
	}
	return Usagef("unknown subcommand %q (want info, vad or formats)", args[0])
}

// runAudioFormats prints the formats table that the sniffer, the file
// picker and the error messages all derive from.
func runAudioFormats(env *Env, args []string) error {
	fs := NewFlagSet(env, "audio formats")
	asJSON := fs.Bool("json", false, "print the table as JSON")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("audio formats takes no arguments")
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(audio.Formats())
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMAT\tEXTENSIONS\tDECODER\tCODECS")
	for _, f := range audio.Formats() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, strings.Join(f.Extensions, " "), f.Decoder, f.Codecs)
	}
	return tw.Flush()
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
