//go:build !desktop

package main

import (
	"errors"
	"io/fs"
)

// Without the desktop tag nothing links GTK/WebKit, which keeps go test
// free of GUI libraries; such a binary still has every subcommand.
func runDesktop(fs.FS) error {
	return errors.New("this hark was built without the desktop window (build with: make build); use 'hark serve' to open the UI in a browser, or 'hark help'")
}
