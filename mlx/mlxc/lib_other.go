//go:build !darwin

package mlxc

import (
	"os"
	"path/filepath"
)

const libName = "libmlxc.so"

// platformDirs are the places to look after HARK_MLXC: beside the
// executable, then the usual local prefixes. The system paths come last,
// through the plain soname.
func platformDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	return append(dirs, "/opt/homebrew/lib", "/usr/local/lib")
}
