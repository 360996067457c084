// Package cli holds Hark's subcommands (hark serve, hark chat, ...). Each
// command lives in its own file and registers itself in init, so main.go only
// dispatches and features add commands without touching a central switch.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"hark/mlx"
)

// Env is what a command may touch of the outside world, so tests can run
// commands in-process with buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
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

var commands = map[string]Command{}

// Register adds a command; called from init in each command's file.
func Register(c Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: duplicate command " + c.Name)
	}
	commands[c.Name] = c
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
// A leading --backend NAME (or HARK_BACKEND) picks the compute backend for
// every command that runs a model.
func Main(ctx context.Context, env *Env, args []string) int {
	args, backend, err := globalFlags(args)
	if err == nil {
		err = selectBackend(backend)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "hark: %v\n", err)
		return ExitUsage
	}
	if len(args) == 0 {
		printHelp(env.Stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprintf(env.Stdout, "usage: %s\n\n%s\n", c.Usage, c.Summary)
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "hark: unknown command %q\n", args[1])
			return ExitUsage
		}
		printHelp(env.Stdout)
		return ExitOK
	}
	c, ok := commands[name]
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	return nil
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

// selectBackend applies --backend, else HARK_BACKEND, else leaves the
// default (the CPU; the app applies its own setting).
func selectBackend(name string) error {
	if name == "" {
		name = os.Getenv("HARK_BACKEND")
	}
	if name == "" || name == "auto" {
		return nil
	}
	return mlx.SetBackend(name)
}

func printHelp(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Hark: local chat and transcription.\n\nusage:\n  hark              open the desktop app\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-17s %s\n", "hark "+n, commands[n].Summary)
	}
	b.WriteString("  hark help CMD     show a command's usage\n\nglobal option: hark --backend cpu|metal CMD ... (or HARK_BACKEND)\n")
	io.WriteString(w, b.String())
}
