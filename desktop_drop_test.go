package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A real X11 drag and drop of a file onto the desktop window: a small GTK
// drag source (build/testdata/dragsource.py) offers the file as
// text/uri-list and xdotool drags it onto Hark. With native drop enabled
// the page only hears of it through the Wails file-drop event, so the
// entry in hark.log proves the whole path: GTK → Wails → the Transcribe
// page → the bound EnqueueTranscriptions.
func TestDesktopNativeFileDrop(t *testing.T) {
	bin := needTools(t)
	python := "/usr/bin/python3" // Debian's: python3-gi lives there, not in a pyenv first on PATH
	if out, err := exec.Command(python, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk").CombinedOutput(); err != nil {
		t.Skipf("the drag source needs python3-gi and gir1.2-gtk-3.0 for %s: %v %s", python, err, out)
	}
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

	memo := filepath.Join(t.TempDir(), "voice memo.wav")
	if err := os.WriteFile(memo, toneWAV(16000, 1), 0o644); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	app := exec.Command(bin)
	app.Env = env
	app.Stderr = &stderr
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	go app.Wait()
	defer func() {
		if app.ProcessState == nil {
			app.Process.Kill()
		}
	}()
	win := waitWindow(t, env, app, &stderr)
	// No window manager: place the windows side by side ourselves.
	xdo("windowmove", "--sync", win, "100", "0")
	dir := os.Getenv("HARK_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, "desktop-drop.png")
	waitRendered(t, env, win, shot)

	// Open the Transcribe page (Ctrl+2), which listens for file drops.
	xdo("windowfocus", "--sync", win)
	xdo("key", "ctrl+2")
	time.Sleep(time.Second)

	src := exec.Command(python, "build/testdata/dragsource.py", "hark-drag-source", memo)
	src.Env = env
	src.Stderr = os.Stderr
	out, err := src.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { src.Process.Kill(); src.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("drag source did not start: %q", lines.Text())
	}
	srcWin := strings.Fields(xdo("search", "--sync", "--onlyvisible", "--name", "^hark-drag-source$"))[0]
	xdo("windowsize", "--sync", srcWin, "90", "90")
	xdo("windowmove", "--sync", srcWin, "0", "0")

	// Press on the source, move onto Hark in small steps (GTK starts a
	// drag past a threshold, and XDND needs the motion), release there.
	xdo("mousemove", "--sync", "45", "45")
	xdo("mousedown", "1")
	for i := 1; i <= 30; i++ {
		xdo("mousemove", fmt.Sprint(45+i*22), fmt.Sprint(45+i*12))
		time.Sleep(40 * time.Millisecond)
	}
	// The page answers dragover asynchronously; a few more motions over
	// the target let WebKit's answer (accept a copy) reach the source.
	for i := 0; i < 6; i++ {
		time.Sleep(250 * time.Millisecond)
		xdo("mousemove", fmt.Sprint(705+i%2), "405")
	}
	time.Sleep(250 * time.Millisecond)
	capture(env, win, filepath.Join(dir, "desktop-drop-hover.png"))
	xdo("mouseup", "1")
	srcSaid := make(chan string, 1)
	go func() {
		var said []string
		for lines.Scan() {
			said = append(said, lines.Text())
		}
		srcSaid <- strings.Join(said, ", ")
	}()

	logPath := filepath.Join(home, "hark.log")
	deadline := time.Now().Add(20 * time.Second)
	for {
		log, _ := os.ReadFile(logPath)
		if bytes.Contains(log, []byte("transcribe: queued")) && bytes.Contains(log, []byte(memo)) {
			// No model in this HARK_HOME: the entry then fails with the
			// reason, which shows the queue ran it.
			if bytes.Contains(log, []byte("no speech model chosen")) {
				break
			}
		}
		if time.Now().After(deadline) {
			capture(env, win, shot)
			geo := xdo("getwindowgeometry", win) + " / " + xdo("getwindowgeometry", srcWin)
			src.Process.Kill()
			t.Fatalf("the dropped file never reached the queue (screenshot %s; drag source said %q; windows: %s); hark.log:\n%s\nstderr: %s",
				shot, <-srcSaid, geo, log, stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The page must not also take the drop as an HTML5 upload: one entry.
	time.Sleep(time.Second)
	capture(env, win, shot)
	log, _ := os.ReadFile(logPath)
	if n := bytes.Count(log, []byte("transcribe: queued")); n != 1 {
		t.Errorf("%d queue entries for one drop; hark.log:\n%s", n, log)
	}
	app.Process.Signal(os.Interrupt)
}

// waitRendered waits until the window shows the page, not a blank frame.
func waitRendered(t *testing.T, env []string, win, shot string) {
	t.Helper()
	var last error
	for i := 0; i < 60; i++ {
		time.Sleep(500 * time.Millisecond)
		if last = capture(env, win, shot); last == nil && distinctColours(t, shot) >= 50 {
			return
		}
	}
	geo, _ := xcmd(env, "xdotool", "getwindowgeometry", win)
	t.Fatalf("window never rendered (screenshot %s; last capture error %v; %s)", shot, last, geo)
}

// capture saves the part of the window that is on the screen, read from the
// root window: X refuses to read a window that lies partly off the screen
// (it can during startup, before the saved geometry is clamped).
func capture(env []string, win, shot string) error {
	out, err := xcmd(env, "xdotool", "getwindowgeometry", "--shell", win)
	if err != nil {
		return err
	}
	g := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(l, "=")
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		g[k] = n
	}
	root, err := xcmd(env, "xdotool", "getdisplaygeometry")
	if err != nil {
		return err
	}
	var sw, sh int
	fmt.Sscan(root, &sw, &sh)
	x0, y0 := max(g["X"], 0), max(g["Y"], 0)
	x1, y1 := min(g["X"]+g["WIDTH"], sw), min(g["Y"]+g["HEIGHT"], sh)
	if x1 <= x0 || y1 <= y0 {
		return fmt.Errorf("window %s is off the %dx%d screen: %s", win, sw, sh, strings.ReplaceAll(out, "\n", " "))
	}
	_, err = xcmd(env, "import", "-window", "root", "-crop", fmt.Sprintf("%dx%d+%d+%d", x1-x0, y1-y0, x0, y0), "+repage", shot)
	return err
}

func xcmd(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// toneWAV is seconds of a 440 Hz tone as 16-bit mono PCM WAV.
func toneWAV(rate, seconds int) []byte {
	n := rate * seconds
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, uint32(2*n))
	for i := 0; i < n; i++ {
		binary.Write(&b, le, int16(8000*math.Sin(2*math.Pi*440*float64(i)/float64(rate))))
	}
	return b.Bytes()
}
