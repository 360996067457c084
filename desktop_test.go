package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startXvfb starts a private X server and returns its DISPLAY.
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	x.ExtraFiles = []*os.File{w}
	if err := x.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { x.Process.Kill(); x.Wait() })
	buf := make([]byte, 16)
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := r.Read(buf)
	if err != nil {
		t.Fatalf("Xvfb did not report a display: %v", err)
	}
	return ":" + strings.TrimSpace(string(buf[:n]))
}

func needTools(t *testing.T) string {
	bin := os.Getenv("HARK_DESKTOP_BIN")
	if bin == "" {
		t.Skip("HARK_DESKTOP_BIN not set: the desktop smoke test runs from make test against the built app")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing (make setup installs it): %v", tool, err)
		}
	}
	return bin
}

// waitWindow polls xdotool for a visible window titled Hark.
func waitWindow(t *testing.T, env []string, proc *exec.Cmd, stderr *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if proc.ProcessState != nil {
			t.Fatalf("hark exited before showing a window: %s", stderr)
		}
		cmd := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^Hark$")
		cmd.Env = env
		if out, err := cmd.Output(); err == nil {
			if ids := strings.Fields(string(out)); len(ids) > 0 {
				return ids[0]
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no Hark window within 60 s; stderr: %s", stderr)
	return ""
}

// distinctColours counts colours in a screenshot (capped), a cheap test
// that the page rendered rather than a blank or black window.
func distinctColours(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bb, _ := img.At(x, y).RGBA()
			seen[(r>>8)<<16|(g>>8)<<8|bb>>8] = true
		}
	}
	return len(seen)
}

func TestDesktopWindowSmoke(t *testing.T) {
	bin := needTools(t)
	display := startXvfb(t)
	home := t.TempDir()
	env := append(os.Environ(), "DISPLAY="+display, "HARK_HOME="+home, "WEBKIT_DISABLE_COMPOSITING_MODE=1")

	var stderr bytes.Buffer
	app := exec.Command(bin)
	app.Env = env
	app.Stderr = &stderr
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	defer func() {
		if app.ProcessState == nil {
			app.Process.Kill()
		}
	}()
	win := waitWindow(t, env, app, &stderr)

	// The page renders asynchronously; retry the screenshot until it
	// shows more than a flat background.
	dir := os.Getenv("HARK_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, "desktop-smoke.png")
	colours := 0
	for i := 0; i < 40 && colours < 50; i++ {
		time.Sleep(500 * time.Millisecond)
		imp := exec.Command("import", "-window", win, shot)
		imp.Env = env
		if out, err := imp.CombinedOutput(); err != nil {
			t.Logf("import: %v %s", err, out)
			continue
		}
		colours = distinctColours(t, shot)
	}
	t.Logf("screenshot %s: %d colours", shot, colours)
	if colours < 50 {
		t.Fatalf("window looks blank (%d colours); stderr: %s", colours, stderr.String())
	}

	// A second launch must refuse cleanly and leave the first untouched.
	second := exec.Command(bin)
	second.Env = env
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already running") {
		t.Fatalf("second launch: err %v, output %s", err, out)
	}

	app.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("quit with %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("app did not quit within 20 s of SIGTERM")
	}
	log, _ := os.ReadFile(filepath.Join(home, "hark.log"))
	if !strings.Contains(string(log), "hark stopped") {
		t.Fatalf("no clean shutdown in hark.log:\n%s", log)
	}
	fmt.Fprintln(os.Stderr, "desktop smoke screenshot:", shot)
}
