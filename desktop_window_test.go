package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The window reopens where the user left it: start, move and resize with
// xdotool, quit, start again in the same data dir, and read the geometry
// back from X. Then a saved position off this screen is pulled back on it.
func TestDesktopWindowState(t *testing.T) {
	bin := needTools(t)
	display := startXvfb(t)
	home := t.TempDir()
	env := append(os.Environ(), "DISPLAY="+display, "HARK_HOME="+home, "HF_HUB_CACHE="+t.TempDir(), "WEBKIT_DISABLE_COMPOSITING_MODE=1")
	xdo := func(args ...string) string {
		t.Helper()
		out, err := xcmd(env, "xdotool", args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// geometry is the window's position and size as X reports them.
	geometry := func(win string) (x, y, w, h int) {
		t.Helper()
		for _, l := range strings.Split(xdo("getwindowgeometry", "--shell", win), "\n") {
			k, v, _ := strings.Cut(l, "=")
			var n int
			fmt.Sscan(v, &n)
			switch k {
			case "X":
				x = n
			case "Y":
				y = n
			case "WIDTH":
				w = n
			case "HEIGHT":
				h = n
			}
		}
		return
	}
	run := func(step func(win string)) {
		t.Helper()
		var stderr bytes.Buffer
		app := exec.Command(bin)
		app.Env = env
		app.Stderr = &stderr
		if err := app.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- app.Wait() }()
		win := waitWindow(t, env, app, &stderr)
		dir := os.Getenv("HARK_ARTIFACTS")
		if dir == "" {
			dir = t.TempDir()
		}
		waitRendered(t, env, win, filepath.Join(dir, "desktop-window-state.png"))
		step(win)
		app.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			app.Process.Kill()
			t.Fatalf("no quit within 20 s of SIGTERM; stderr: %s", stderr.String())
		}
	}
	// waitGeometry polls until X shows the wanted geometry (the restore
	// happens once the page is up).
	waitGeometry := func(win string, want [4]int) {
		t.Helper()
		var got [4]int
		for i := 0; i < 40; i++ {
			got[0], got[1], got[2], got[3] = geometry(win)
			if got == want {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		log, _ := os.ReadFile(filepath.Join(home, "hark.log"))
		saved, _ := os.ReadFile(filepath.Join(home, "window.json"))
		t.Fatalf("window at %v, want %v; window.json %s; hark.log:\n%s", got, want, saved, log)
	}

	run(func(win string) {
		xdo("windowsize", "--sync", win, "900", "600")
		xdo("windowmove", "--sync", win, "130", "70")
		waitGeometry(win, [4]int{130, 70, 900, 600})
	})
	var saved struct{ X, Y, Width, Height int }
	b, err := os.ReadFile(filepath.Join(home, "window.json"))
	if err != nil || json.Unmarshal(b, &saved) != nil {
		t.Fatalf("window.json after quit: %v %s", err, b)
	}
	if saved.X != 130 || saved.Y != 70 || saved.Width != 900 || saved.Height != 600 {
		t.Fatalf("saved %+v", saved)
	}
	run(func(win string) { waitGeometry(win, [4]int{130, 70, 900, 600}) })

	// Saved on a monitor that is gone (and larger than this one): back on
	// the 1280×800 screen, whole.
	os.WriteFile(filepath.Join(home, "window.json"), []byte(`{"x":2900,"y":1500,"width":1400,"height":700}`), 0o644)
	run(func(win string) { waitGeometry(win, [4]int{0, 100, 1280, 700}) })
}
