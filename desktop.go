//go:build desktop

package main

import (
	"context"
	_ "embed"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/mac"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"hark/app"
)

//go:embed build/appicon.png
var icon []byte

// runDesktop opens the Wails window on the same App the HTTP server uses:
// the Service is bound for calls, events go out through the Wails runtime.
func runDesktop(ui fs.FS) error {
	a, err := app.New(app.Options{UI: ui, Desktop: true})
	if err != nil {
		return err
	}
	defer a.Close()
	win := &windowKeeper{a: a}
	width, height := win.initialSize()
	return wails.Run(&options.App{
		Title:            "Hark",
		Width:            width,
		Height:           height,
		MinWidth:         minWidth,
		MinHeight:        minHeight,
		BackgroundColour: &options.RGBA{R: 246, G: 246, B: 247, A: 255},
		// Shown by the window keeper once the saved geometry is applied:
		// WebKitGTK could leave the page unpainted when the window moved
		// and resized right after it first drew (a blank window, seen in
		// the desktop tests), and the user never sees it jump.
		StartHidden: true,
		AssetServer: &assetserver.Options{Assets: ui, Handler: a.DesktopHandler()},
		OnStartup: func(ctx context.Context) {
			// SIGTERM/SIGINT quit through Wails so shutdown hooks run and
			// the database closes cleanly.
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
			go func() { <-sig; win.save(); runtime.Quit(ctx) }()
			a.SetDialogs(wailsDialogs{ctx})
			// The window starts hidden until the page is up (see
			// StartHidden); should the page never load, show it anyway.
			time.AfterFunc(5*time.Second, func() { runtime.WindowShow(ctx) })
			a.Events.SetSink(func(ev app.Event) { runtime.EventsEmit(ctx, ev.Topic, ev.Data) })
			// The OpenAI-compatible API on hark serve's port, unless
			// Settings turned it off (a busy port is only logged).
			if st, err := a.Service.GetSettings(); err == nil && !st.APIDisabled {
				a.ServeAPI(ctx, app.DesktopAPIAddr)
			}
			runtime.OnFileDrop(ctx, func(x, y int, paths []string) {
				a.Events.Publish("filedrop", map[string]any{"x": x, "y": y, "paths": paths})
			})
		},
		OnDomReady:    win.restore,
		OnBeforeClose: func(context.Context) bool { win.save(); return false },
		OnShutdown:    func(context.Context) { a.Events.SetSink(nil); a.SetDialogs(nil) },
		Bind:          []any{a.Service},
		DragAndDrop:   &options.DragAndDrop{EnableFileDrop: true, DisableWebViewDrop: false},
		Linux:         &linux.Options{Icon: icon, ProgramName: "hark"},
		Mac: &mac.Options{
			TitleBar: mac.TitleBarHiddenInset(),
			About:    &mac.AboutInfo{Title: "Hark", Message: "Local chat and transcription. Version " + app.Version},
		},
	})
}
