package app

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWindowStateRoundTripAndClamp(t *testing.T) {
	a, _ := newTestApp(t)
	if _, ok := a.LoadWindowState(); ok {
		t.Fatal("a fresh data dir has a window state")
	}
	want := WindowState{X: 40, Y: 30, Width: 900, Height: 640}
	if err := a.SaveWindowState(want); err != nil {
		t.Fatal(err)
	}
	got, ok := a.LoadWindowState()
	if !ok || got != want {
		t.Fatalf("loaded %+v %v, want %+v", got, ok, want)
	}

	// A broken file is ignored, not fatal.
	os.WriteFile(filepath.Join(a.DataDir, windowFile), []byte(`{"width":-3`), 0o644)
	if w, ok := a.LoadWindowState(); ok {
		t.Fatalf("broken file loaded as %+v", w)
	}

	for _, c := range []struct{ in, want WindowState }{
		{WindowState{X: 100, Y: 50, Width: 800, Height: 600}, WindowState{X: 100, Y: 50, Width: 800, Height: 600}},
		// Left on a second monitor that is gone: pulled back on screen.
		{WindowState{X: 3000, Y: 900, Width: 800, Height: 600}, WindowState{X: 480, Y: 200, Width: 800, Height: 600}},
		{WindowState{X: -500, Y: -20, Width: 800, Height: 600}, WindowState{X: 0, Y: 0, Width: 800, Height: 600}},
		// Larger than this screen: cut to it.
		{WindowState{X: 10, Y: 10, Width: 2560, Height: 1600}, WindowState{X: 0, Y: 0, Width: 1280, Height: 800}},
		// Below the minimum: grown to it.
		{WindowState{X: 10, Y: 10, Width: 100, Height: 80}, WindowState{X: 10, Y: 10, Width: 760, Height: 520}},
	} {
		if got := c.in.Clamp(1280, 800, 760, 520); got != c.want {
			t.Errorf("Clamp(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}
