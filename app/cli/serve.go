package cli

import (
	"context"
	"fmt"
	"net"

	"hark/app"
)

// DefaultAddr is where hark serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8734"

// serveCommand is hark serve, listed by Commands.
func serveCommand() Command {
	return Command{
		Name:    "serve",
		Usage:   "hark serve [--addr 127.0.0.1:PORT] [--api-key KEY] [--headless]",
		Summary: "serve the Hark UI and API to a browser on localhost",
		Run:     runServe,
	}
}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "serve")
	addr := fs.String("addr", DefaultAddr, "address to listen on (port 0 picks a free port); one that is not loopback needs an API key")
	apiKey := fs.String("api-key", "", "require this key (Authorization: Bearer KEY) on the OpenAI-compatible /v1 API; else the API key setting")
	headless := fs.Bool("headless", false, "serve the API only, without the UI")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	if *apiKey != "" && len(*apiKey) < 8 {
		return Usagef("--api-key must be at least 8 characters")
	}
	a, err := app.New(app.Options{UI: env.UI, Stderr: env.Stderr, Backend: env.Backend, APIKey: *apiKey, Headless: *headless})
	if err != nil {
		return err
	}
	defer a.Close()
	var ln net.Listener
	if app.LoopbackAddr(*addr) {
		ln, err = app.Listen(*addr)
	} else {
		st, serr := a.DB.Settings(ctx)
		if *apiKey == "" && (serr != nil || st.APIKey == "") {
			return Usagef("address %q is not loopback: serving other machines needs an API key (--api-key KEY, or the API key in Settings)", *addr)
		}
		ln, err = app.ListenShared(*addr)
	}
	if err != nil {
		return Usagef("%v", err)
	}
	// Tests and scripts wait for this exact line to learn the port.
	fmt.Fprintf(env.Stdout, "Hark is serving on http://%s\n", ln.Addr())
	return a.Serve(ctx, ln)
}
