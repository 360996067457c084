package app

import (
	"io"
	"testing"
)

// Each App reports the mode it was made with: two in one process (a
// desktop window and a browser server, say) do not share it.
func TestModePerApp(t *testing.T) {
	desk, err := New(Options{DataDir: t.TempDir(), Stderr: io.Discard, NoLock: true, Desktop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer desk.Close()
	web, err := New(Options{DataDir: t.TempDir(), Stderr: io.Discard, NoLock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	for _, c := range []struct {
		a    *App
		want string
	}{{desk, "desktop"}, {web, "browser"}, {desk, "desktop"}} {
		info, err := c.a.Service.GetInfo()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode != c.want {
			t.Errorf("mode %q, want %q", info.Mode, c.want)
		}
	}
}
