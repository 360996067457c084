package backends_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestNothingAboveMLXImportsABackend: models, the engine and the app see
// package mlx only. A backend's internals (its package, or the CPU's
// kernels) are imported by backends and their own tests, and binaries get
// the backends through this package alone, so a new backend slots in
// without touching them.
func TestNothingAboveMLXImportsABackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "hark/...").Output()
	if err != nil {
		t.Skipf("go list unavailable here: %v", err)
	}
	internals := []string{"hark/mlx/cpu", "hark/mlx/kernels", "hark/mlx/mlxc"}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		if strings.HasPrefix(p.ImportPath, "hark/mlx") {
			continue // the array core, the backends and their kits
		}
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			for _, in := range internals {
				if imp == in || strings.HasPrefix(imp, in+"/") {
					t.Errorf("%s imports %s: only package mlx (and hark/mlx/backends, to link them) may be used above the backends", p.ImportPath, imp)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list saw only %d packages", seen)
	}
}
