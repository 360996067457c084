package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WindowState is the desktop window's geometry, kept in the data dir
// (window.json) so the window reopens where the user left it.
type WindowState struct {
	X         int  `json:"x"`
	Y         int  `json:"y"`
	Width     int  `json:"width"`
	Height    int  `json:"height"`
	Maximised bool `json:"maximised,omitempty"`
}

const windowFile = "window.json"

// LoadWindowState reads the saved geometry; ok is false when there is none
// or it is unreadable (the window then opens at its default size; a broken
// file is only logged, never fatal).
func (a *App) LoadWindowState() (WindowState, bool) {
	var w WindowState
	path := filepath.Join(a.DataDir, windowFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return w, false
	}
	if err == nil {
		err = json.Unmarshal(b, &w)
	}
	if err == nil && (w.Width <= 0 || w.Height <= 0) {
		err = fmt.Errorf("size %dx%d", w.Width, w.Height)
	}
	if err != nil {
		a.Log.Warn("window state ignored", "file", path, "err", err)
		return WindowState{}, false
	}
	return w, true
}

// SaveWindowState writes the geometry atomically (a crash mid-write leaves
// the previous one).
func (a *App) SaveWindowState(w WindowState) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	path := filepath.Join(a.DataDir, windowFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save window state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save window state: %w", err)
	}
	return nil
}

// Clamp fits the geometry onto a screen of screenW×screenH (the window
// must not reopen off a monitor that has since gone, or larger than the
// screen): the size is cut to the screen, no smaller than minW×minH, and the
// position moved so the whole window is visible.
func (w WindowState) Clamp(screenW, screenH, minW, minH int) WindowState {
	if screenW <= 0 || screenH <= 0 {
		return w
	}
	w.Width = max(min(w.Width, screenW), min(minW, screenW))
	w.Height = max(min(w.Height, screenH), min(minH, screenH))
	w.X = max(0, min(w.X, screenW-w.Width))
	w.Y = max(0, min(w.Y, screenH-w.Height))
	return w
}
