package cli

import (
	"context"
	"fmt"
	"runtime"

	"hark/app"
)

// versionCommand is hark version, listed by Commands.
func versionCommand() Command {
	return Command{
		Name:    "version",
		Usage:   "hark version",
		Summary: "print the version",
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return Usagef("takes no arguments")
			}
			fmt.Fprintf(env.Stdout, "hark %s (%s, %s/%s)\n", app.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
