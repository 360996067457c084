//go:build desktop

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"hark/app"
)

const (
	defaultWidth, defaultHeight = 1180, 780
	minWidth, minHeight         = 760, 520
)

// windowKeeper remembers the window's geometry across restarts: restored
// (clamped onto the current screen) once the page is up, watched while the
// app runs, and saved once more on the way out.
type windowKeeper struct {
	a    *app.App
	once sync.Once // DOM ready fires again on a reload

	mu    sync.Mutex
	ctx   context.Context // nil until restored: nothing to save before that
	saved app.WindowState
}

// initialSize is the size the window opens at: the saved one, or the default.
func (k *windowKeeper) initialSize() (int, int) {
	if w, ok := k.a.LoadWindowState(); ok {
		return max(w.Width, minWidth), max(w.Height, minHeight)
	}
	return defaultWidth, defaultHeight
}

// restore moves the window where it was, then watches it.
func (k *windowKeeper) restore(ctx context.Context) {
	k.once.Do(func() { k.restoreOnce(ctx) })
}

func (k *windowKeeper) restoreOnce(ctx context.Context) {
	w, ok := k.a.LoadWindowState()
	var c app.WindowState
	if ok {
		sw, sh := screenSize(ctx)
		c = w.Clamp(sw, sh, minWidth, minHeight)
		place(ctx, c)
		if w.Maximised {
			runtime.WindowMaximise(ctx)
		}
		k.a.Log.Info("window restored", "x", c.X, "y", c.Y, "width", c.Width, "height", c.Height, "maximised", w.Maximised, "screen", fmt.Sprintf("%dx%d", sw, sh))
	}
	runtime.WindowShow(ctx)
	go func() {
		// The toolkit centres the new window from its own queue, which can
		// run after the restore above (GTK on a loaded machine does): look
		// again shortly and put the window back once if it was moved.
		if ok && !w.Maximised {
			for _, wait := range []time.Duration{300 * time.Millisecond, time.Second} {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				if got := geometry(ctx); got != c {
					k.a.Log.Info("window moved during startup; placed again", "at", got, "want", c)
					place(ctx, c)
				}
			}
		}
		k.mu.Lock()
		k.ctx, k.saved = ctx, w
		k.mu.Unlock()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				k.save()
			}
		}
	}()
}

func place(ctx context.Context, c app.WindowState) {
	runtime.WindowSetSize(ctx, c.Width, c.Height)
	runtime.WindowSetPosition(ctx, c.X, c.Y)
}

func geometry(ctx context.Context) app.WindowState {
	var g app.WindowState
	g.X, g.Y = runtime.WindowGetPosition(ctx)
	g.Width, g.Height = runtime.WindowGetSize(ctx)
	return g
}

// save writes the geometry when it changed. A maximised window keeps the
// size it had before, so unmaximising after a restart is still useful.
func (k *windowKeeper) save() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ctx == nil {
		return
	}
	w := k.saved
	if w.Maximised = runtime.WindowIsMaximised(k.ctx); !w.Maximised {
		g := geometry(k.ctx)
		w.X, w.Y, w.Width, w.Height = g.X, g.Y, g.Width, g.Height
	}
	if w == k.saved || w.Width <= 0 || w.Height <= 0 {
		return
	}
	if err := k.a.SaveWindowState(w); err != nil {
		k.a.Log.Warn("window state", "err", err)
		return
	}
	k.saved = w
}

// screenSize is the logical size of the screen the window is on (else the
// primary one); 0×0 when unknown, which leaves the geometry unclamped.
func screenSize(ctx context.Context) (int, int) {
	screens, err := runtime.ScreenGetAll(ctx)
	if err != nil {
		return 0, 0
	}
	var best *runtime.Screen
	for i := range screens {
		s := &screens[i]
		if s.IsCurrent || (best == nil && s.IsPrimary) {
			best = s
		}
	}
	if best == nil && len(screens) > 0 {
		best = &screens[0]
	}
	if best == nil {
		return 0, 0
	}
	return best.Size.Width, best.Size.Height
}

// wailsDialogs are the native dialogs of the window the runtime ctx names.
type wailsDialogs struct{ ctx context.Context }

func wailsFilters(fs []app.FileFilter) []runtime.FileFilter {
	out := make([]runtime.FileFilter, len(fs))
	for i, f := range fs {
		out[i] = runtime.FileFilter{DisplayName: f.DisplayName, Pattern: f.Pattern}
	}
	return out
}

func (d wailsDialogs) OpenFiles(title string, filters []app.FileFilter) ([]string, error) {
	return runtime.OpenMultipleFilesDialog(d.ctx, runtime.OpenDialogOptions{Title: title, Filters: wailsFilters(filters)})
}

func (d wailsDialogs) SaveFile(title, dir, name string, filters []app.FileFilter) (string, error) {
	return runtime.SaveFileDialog(d.ctx, runtime.SaveDialogOptions{
		Title: title, DefaultDirectory: dir, DefaultFilename: name,
		Filters: wailsFilters(filters), CanCreateDirectories: true,
	})
}
