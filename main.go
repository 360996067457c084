// Command hark is the Hark desktop app and its command line: with no
// arguments it opens the window; with a subcommand it runs that command
// (hark help lists them).
package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"hark/app/cli"
)

//go:embed all:frontend/dist
var dist embed.FS

// ui is the built frontend; before a frontend build it holds only .gitkeep.
func ui() fs.FS {
	sub, err := fs.Sub(dist, "frontend/dist")
	if err != nil {
		panic(err)
	}
	return sub
}

func main() {
	if len(os.Args) < 2 {
		if err := runDesktop(ui()); err != nil {
			fmt.Fprintln(os.Stderr, "hark:", err)
			os.Exit(cli.ExitError)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills as usual: nothing
		// stuck in a command can make the process unkillable by Ctrl-C.
		<-ctx.Done()
		stop()
	}()
	env := cli.OSEnv()
	env.UI = ui()
	code := cli.Main(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
