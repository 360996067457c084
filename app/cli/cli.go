// Package cli holds Hark's subcommands (hark serve, hark chat, ...). Each
// command lives in its own file; Commands is the one list of them, so what
// exists is said in one place rather than by init() side effects, and
// main.go only dispatches.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hark/app"
	"hark/library/store"
	"hark/mlx"
)

// Env is what a command may touch of the outside world, so tests can run
// commands in-process with buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Backend is the global --backend flag ("" when absent), which hark
	// serve passes on to its app, and Selection what Main chose with it.
	Backend   string
	Selection mlx.Selection
	// UI is the built frontend hark serve serves (nil: none, as in tests).
	UI fs.FS
}

// OSEnv is the process's own standard streams.
func OSEnv() *Env { return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

// Command is one subcommand.
type Command struct {
	Name    string // first word after hark
	Usage   string // e.g. "hark serve [--addr 127.0.0.1:PORT]"
	Summary string // one line for hark help
	Run     func(ctx context.Context, env *Env, args []string) error
}

// Commands is every subcommand, in the order hark help lists them.
func Commands() []Command {
	return []Command{
		audioCommand(),
		chatCommand(),
		doctorCommand(),
		modelsCommand(),
		serveCommand(),
		templateCommand(),
		tokenizeCommand(),
		transcribeCommand(),
		versionCommand(),
	}
}

// lookup finds the command called name in cmds.
func lookup(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// UsageError marks a mistake in how the command was called: exit code 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Exit codes follow POSIX habits: 0 success, 1 failure, 2 bad usage.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Main runs the subcommand named by args[0] and returns the exit code.
// The compute backend is chosen first, by mlx.Select, as the app chooses
// it: a leading --backend NAME, else HARK_BACKEND, else the saved setting,
// else auto. A name no backend has is a usage error.
func Main(ctx context.Context, env *Env, args []string) int {
	args, backend, err := globalFlags(args)
	if err == nil {
		env.Backend = backend
		setting, _ := savedBackend(ctx) // unreadable: as if none; hark doctor says why
		env.Selection, err = mlx.Select(backend, setting)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "hark: %v\n", err)
		return ExitUsage
	}
	cmds := Commands()
	if len(args) == 0 {
		printHelp(env.Stderr, cmds)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c, ok := lookup(cmds, args[1]); ok {
				fmt.Fprintf(env.Stdout, "usage: %s\n\n%s\n", c.Usage, c.Summary)
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "hark: unknown command %q\n", args[1])
			return ExitUsage
		}
		printHelp(env.Stdout, cmds)
		return ExitOK
	}
	c, ok := lookup(cmds, name)
	if !ok {
		fmt.Fprintf(env.Stderr, "hark: unknown command %q (run 'hark help' for the list)\n", name)
		return ExitUsage
	}
	err = c.Run(ctx, env, args[1:])
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "hark %s: %v\nusage: %s\n", name, err, c.Usage)
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "hark %s: %v\n", name, err)
	return ExitError
}

// NewFlagSet returns a flag set that reports parse errors as UsageError
// instead of exiting the process.
func NewFlagSet(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("hark "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// Parse parses flags and turns flag errors into UsageError.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(interspersed(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	return nil
}

// interspersed moves flags before the arguments, so `hark models search
// qwen --mlx` means what it says (the flag package stops at the first
// argument). A flag's value travels with it; "--" ends the flags.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), rest...)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// globalFlags strips the options that may stand before the command name.
func globalFlags(args []string) (rest []string, backend string, err error) {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--backend" || a == "-backend":
			if len(args) < 2 {
				return nil, "", errors.New("--backend needs a name")
			}
			backend, args = args[1], args[2:]
		case strings.HasPrefix(a, "--backend="):
			backend, args = strings.TrimPrefix(a, "--backend="), args[1:]
		default:
			return args, backend, nil
		}
	}
	return args, backend, nil
}

// savedBackend is the backend setting the app saved, "" when no database
// exists yet (none is created for it).
func savedBackend(ctx context.Context) (string, error) {
	path := filepath.Join(app.DataDir(), "hark.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	db, err := store.Open(path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	s, err := db.Settings(ctx)
	if err != nil {
		return "", err
	}
	return s.Backend, nil
}

// backendChoices is the --backend help: every backend this build has,
// then auto.
func backendChoices() string { return strings.Join(append(mlx.Backends(), "auto"), "|") }

func printHelp(w io.Writer, cmds []Command) {
	var b strings.Builder
	b.WriteString("Hark: local chat and transcription.\n\nusage:\n  hark              open the desktop app\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-17s %s\n", "hark "+c.Name, c.Summary)
	}
	fmt.Fprintf(&b, "  hark help CMD     show a command's usage\n\nglobal option: hark --backend %s CMD ... (or HARK_BACKEND; else the Settings choice)\n", backendChoices())
	io.WriteString(w, b.String())
}
