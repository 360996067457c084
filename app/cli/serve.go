package cli

import (
	"context"
	"fmt"
	"io/fs"

	"hark/app"
)

// UI is the built frontend embedded in the binary; main sets it.
var UI fs.FS

// DefaultAddr is where hark serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8734"

func init() {
	Register(Command{
		Name:    "serve",
		Usage:   "hark serve [--addr 127.0.0.1:PORT]",
		Summary: "serve the Hark UI and API to a browser on localhost",
		Run:     runServe,
	})
}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "serve")
	addr := fs.String("addr", DefaultAddr, "loopback address to listen on (port 0 picks a free port)")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	ln, err := app.Listen(*addr)
	if err != nil {
		return Usagef("%v", err)
	}
	a, err := app.New(app.Options{UI: UI, Stderr: env.Stderr, Backend: env.Backend})
	if err != nil {
		ln.Close()
		return err
	}
	defer a.Close()
	// Tests and scripts wait for this exact line to learn the port.
	fmt.Fprintf(env.Stdout, "Hark is serving on http://%s\n", ln.Addr())
	return a.Serve(ctx, ln)
}
