package app

import (
	"hark/app/savefile"

	"github.com/adrg/xdg"
)

// downloadsDir is where the desktop app saves exports; tests replace it.
var downloadsDir = func() string { return xdg.UserDirs.Download }

// saveDownload writes data as name in the Downloads folder and returns the
// path. The desktop window cannot download a blob the way a browser does,
// so the app saves exports itself. An existing file is never overwritten:
// "name (2).ext" and so on are tried instead.
func saveDownload(name string, data []byte) (string, error) {
	return savefile.Unique(downloadsDir(), name, data)
}
