package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// createOutput creates DIR/BASE.EXT for a transcript without ever
// replacing a file silently: when the name is taken (by an earlier file,
// or by another input of this run with the same name) it tries
// "BASE (2).EXT", "BASE (3).EXT" and so on. force lets it replace a file
// from before this run, but still never one this run wrote. The new
// file is created exclusively, so a file appearing meanwhile is not
// clobbered either.
func createOutput(dir, base, ext string, force bool, written map[string]bool) (*os.File, error) {
	for i := 1; i < 10000; i++ {
		name := base + ext
		if i > 1 {
			name = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		p := filepath.Join(dir, name)
		if written[p] {
			continue
		}
		flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
		if force {
			flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		}
		f, err := os.OpenFile(p, flag, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		written[p] = true
		return f, nil
	}
	return nil, fmt.Errorf("%s: no free name after %s (2) ... (9999)", filepath.Join(dir, base+ext), base)
}
