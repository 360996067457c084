package mlxc

import (
	"os"
	"path/filepath"
)

const libName = "libmlxc.dylib"

// platformDirs are the Mac places to look after HARK_MLXC: the app
// bundle's Frameworks (the executable is in Contents/MacOS), beside the
// executable, then Homebrew's prefixes (arm64 and Intel).
func platformDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "..", "Frameworks"), dir)
	}
	return append(dirs, "/opt/homebrew/lib", "/usr/local/lib")
}
