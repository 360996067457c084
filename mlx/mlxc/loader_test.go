package mlxc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxc"
)

// buildSO compiles C source into a shared library in dir, or skips when
// there is no C compiler.
func buildSO(t *testing.T, dir, name, src string) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler to build a test library with")
		}
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, name+".so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return so
}

func TestLoaderErrors(t *testing.T) {
	dir := t.TempDir()
	expect := func(t *testing.T, path string, wants ...string) {
		t.Helper()
		err := mlxc.OpenLibrary(path)
		if err == nil {
			t.Fatalf("%s opened", path)
		}
		for _, w := range append([]string{path}, wants...) {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q does not say %q", err, w)
			}
		}
	}
	t.Run("Missing", func(t *testing.T) { expect(t, filepath.Join(dir, "nope", "libmlxc.so"), "no such file") })
	t.Run("NotALibrary", func(t *testing.T) {
		p := filepath.Join(dir, "libmlxc.so")
		if err := os.WriteFile(p, []byte("this is not a shared library\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		expect(t, p, "cannot be loaded")
	})
	t.Run("LacksSymbols", func(t *testing.T) {
		so := buildSO(t, dir, "libfoo", "int foo(void) { return 1; }\n")
		expect(t, so, "lacks", "mlx_add", "more")
	})
	t.Run("WrongArchitecture", func(t *testing.T) {
		so := buildSO(t, dir, "libarch", "int foo(void) { return 1; }\n")
		b, err := os.ReadFile(so)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 20 || string(b[1:4]) != "ELF" {
			t.Skip("not an ELF system")
		}
		// e_machine: claim another architecture (s390 = 22; ours is not)
		b[18], b[19] = 22, 0
		p := filepath.Join(dir, "libother.so")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		expect(t, p, "cannot be loaded")
	})
	t.Run("TooOld", func(t *testing.T) {
		// Every required symbol, as a stub; mlx_version reports 0.29.1.
		req, _ := mlxc.RequiredSymbols()
		var src strings.Builder
		src.WriteString("static const char v[] = \"0.29.1\";\n")
		for _, s := range req {
			switch s {
			case "mlx_string_data":
				src.WriteString("const char* mlx_string_data(void* s) { return v; }\n")
			case "mlx_set_error_handler":
				src.WriteString("void mlx_set_error_handler(void* a, void* b, void* c) {}\n")
			default:
				src.WriteString("long " + s + "(void) { return 0; }\n")
			}
		}
		so := buildSO(t, dir, "libold", src.String())
		expect(t, so, "MLX 0.29.1", mlxc.HeadersMLX)
	})
}

// TestSelectFallback runs in a child process, so that no library opened
// by other tests is cached: mlx.Select must fall back to cpu and say why.
func TestSelectFallback(t *testing.T) {
	if os.Getenv("MLXC_FALLBACK_CHILD") == "1" {
		sel, err := mlx.Select(mlxc.Name, "")
		if err != nil {
			t.Fatalf("Select: %v", err)
		}
		if sel.Name != "cpu" || !strings.Contains(sel.Reason, os.Getenv(mlxc.EnvLibrary)) || !strings.Contains(sel.Reason, "no such file") {
			t.Fatalf("Select = %+v, want cpu with the missing path as the reason", sel)
		}
		if _, err := mlx.Probe(mlxc.Name); err == nil {
			t.Fatal("Probe of a missing libmlxc succeeded")
		}
		a := mlx.FromSlice([]float32{1, 2}, 2)
		defer a.Free()
		if a.Backend().Name() != "cpu" {
			t.Fatalf("arrays made on %s", a.Backend().Name())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSelectFallback$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MLXC_FALLBACK_CHILD=1", mlxc.EnvLibrary+"="+filepath.Join(t.TempDir(), "missing", "libmlxc.so"), "HARK_BACKEND=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
