package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FileFilter is one line of a native dialog's type menu. Pattern is
// semicolon-separated globs ("*.wav;*.mp3"), as Wails takes it.
type FileFilter struct {
	DisplayName string `json:"displayName"`
	Pattern     string `json:"pattern"`
}

// Dialogs are the window's native open and save dialogs. The desktop
// shell supplies them (through the Wails runtime); hark serve has none and
// keeps the browser's own chooser and downloads. An empty answer means the
// user cancelled.
type Dialogs interface {
	OpenFiles(title string, filters []FileFilter) ([]string, error)
	SaveFile(title, dir, name string, filters []FileFilter) (string, error)
}

// dialogSlot holds the App's native dialogs, set once the window exists.
type dialogSlot struct {
	mu sync.Mutex
	d  Dialogs
}

// SetDialogs installs the native dialogs (nil removes them).
func (a *App) SetDialogs(d Dialogs) {
	a.dialogs.mu.Lock()
	defer a.dialogs.mu.Unlock()
	a.dialogs.d = d
}

func (a *App) nativeDialogs() Dialogs {
	a.dialogs.mu.Lock()
	defer a.dialogs.mu.Unlock()
	return a.dialogs.d
}

// ChooseFiles opens the native multiple-file chooser with the filters the
// page built (for audio, from the one formats table) and returns the chosen
// paths; none when cancelled.
func (s *Service) ChooseFiles(title string, filters []FileFilter) ([]string, error) {
	d := s.app.nativeDialogs()
	if d == nil {
		return nil, BadRequest(errors.New("native file dialogs exist only in the desktop window"))
	}
	for _, f := range filters {
		if strings.TrimSpace(f.Pattern) == "" {
			return nil, BadRequest(fmt.Errorf("file filter %q has no pattern", f.DisplayName))
		}
	}
	paths, err := d.OpenFiles(title, filters)
	if err != nil {
		return nil, fmt.Errorf("file dialog: %w", err)
	}
	return paths, nil
}

// saveExport saves an export the desktop window asked for. With native
// dialogs the user picks the place (Downloads and the export's name are
// offered) and "" means cancelled; without them it goes to Downloads.
func (a *App) saveExport(name string, data []byte, filter FileFilter) (string, error) {
	d := a.nativeDialogs()
	if d == nil {
		return saveDownload(name, data)
	}
	path, err := d.SaveFile("Export", downloadsDir(), name, []FileFilter{filter})
	if err != nil {
		return "", fmt.Errorf("save dialog: %w", err)
	}
	if path == "" {
		return "", nil
	}
	// The dialog has already asked before replacing a file.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hark-export-*")
	if err != nil {
		return "", fmt.Errorf("save %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name()) // a full disk leaves no half file behind
		return "", fmt.Errorf("save %s: %w", path, err)
	}
	return path, nil
}
