package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"hark/app"
	"hark/library/store"
	"hark/mlx"
)

// TestMain keeps every command of these tests off the real data dir: Main
// reads the saved backend setting from it.
func TestMain(m *testing.M) {
	if args := os.Getenv("HARK_CLI_CHILD_ARGS"); args != "" {
		os.Exit(runChild(args)) // a test re-runs this binary as hark (pullcrash_test.go)
	}
	dir, err := os.MkdirTemp("", "hark-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HARK_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func doctorJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errs := run(t, context.Background(), append(args, "doctor", "--json")...)
	if code != ExitOK {
		t.Fatalf("doctor --json: %d %q", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("doctor --json printed no JSON: %v\n%s", err, out)
	}
	return m
}

// field reads a dotted path of a JSON object.
func field(t *testing.T, m map[string]any, path string) any {
	t.Helper()
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object", path, v)
		}
		if v, ok = o[k]; !ok {
			t.Fatalf("no field %s in %v", path, m)
		}
	}
	return v
}

// Doctor reports the choice mlx.Select makes with nothing asked, and
// libmlxc's state: in a build without the mlxc backend it says so, where
// libmlxc is missing it gives the loader's reason, and where it loads its
// path.
func TestDoctorReportsBackendCPUAndMemory(t *testing.T) {
	t.Setenv("HARK_HOME", t.TempDir())
	t.Setenv("HARK_BACKEND", "")
	code, out, errs := run(t, context.Background(), "doctor")
	if code != ExitOK {
		t.Fatalf("doctor: %d %q", code, errs)
	}
	cpu, err := mlx.Probe("cpu")
	if err != nil || !strings.Contains(cpu.Detail, runtime.GOARCH) {
		t.Fatalf("the cpu backend does not describe its CPU: %+v %v", cpu, err)
	}
	auto, err := mlx.Select("", "")
	if err != nil {
		t.Fatal(err)
	}
	mlxc, mlxcErr := mlx.Probe(mlxBackend)
	libLine, mlxcError := "libmlxc    "+mlxc.Library+"\n", ""
	switch {
	case !slices.Contains(mlx.Backends(), mlxBackend):
		mlxcError = "this build has no mlxc backend"
		if auto.Reason != "using the cpu backend: "+mlxcError {
			t.Fatalf("auto without mlxc: %q", auto.Reason)
		}
	case mlxcErr != nil:
		mlxcError = mlxcErr.Error()
		if auto.Name != "cpu" || auto.Reason != "using the cpu backend: "+mlxcError {
			t.Fatalf("auto with a failing mlxc: %+v", auto)
		}
	}
	if mlxcError != "" {
		libLine = "libmlxc    not loaded: " + mlxcError + "\n"
	}
	for _, want := range []string{
		fmt.Sprintf("backend    %s (%s)\n", auto.Name, app.BackendLabel(auto.Name, auto.Info)),
		"  asked    auto, from default\n",
		"  why      " + auto.Reason + "\n",
		"  setting  none saved yet\n",
		libLine,
		fmt.Sprintf("cpu        %d cores; %s\n", runtime.NumCPU(), cpu.Detail),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("HARK_HOME"), "hark.db")); err == nil {
		t.Error("doctor created a database")
	}

	m := doctorJSON(t)
	for path, want := range map[string]any{
		"backend.name": auto.Name, "backend.label": app.BackendLabel(auto.Name, auto.Info), "backend.asked": "auto", "backend.from": "default",
		"backend.reason": auto.Reason, "backend.device.device": auto.Info.Device,
		"setting": "", "mlxc.loaded": mlxcError == "", "mlxc.gpu": mlxc.GPU,
		"cpu.features": cpu.Detail, "cpu.cores": float64(runtime.NumCPU()),
		"platform": runtime.GOOS + "/" + runtime.GOARCH,
	} {
		if got := field(t, m, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if mlxcError != "" && field(t, m, "mlxc.error") != mlxcError {
		t.Errorf("mlxc.error = %v, want %q", field(t, m, "mlxc.error"), mlxcError)
	}
	if bs := field(t, m, "backends").([]any); len(bs) != len(mlx.Backends()) {
		t.Errorf("backends %v, want one per registered backend %v", bs, mlx.Backends())
	}
	total, avail, budget := field(t, m, "memory.total").(float64), field(t, m, "memory.available").(float64), field(t, m, "memory.budget").(float64)
	if runtime.GOOS == "linux" && (total <= 0 || avail <= 0 || avail > total || budget <= 0 || budget > total) {
		t.Errorf("memory: total %v, available %v, budget %v", total, avail, budget)
	}
	if runtime.GOOS == "linux" && !strings.Contains(out, "B: a model estimated to need more is refused\n") {
		t.Errorf("no budget line in:\n%s", out)
	}
}

// The CLI chooses as the app does: --backend, HARK_BACKEND, the saved
// setting, auto.
func TestDoctorFollowsFlagEnvAndSavedSetting(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HARK_HOME", home)
	t.Setenv("HARK_BACKEND", "")
	db, err := store.Open(filepath.Join(home, "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveSettings(context.Background(), store.Settings{Backend: "cpu"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	check := func(m map[string]any, from, reason string) {
		t.Helper()
		if field(t, m, "backend.from") != from || field(t, m, "backend.reason") != reason || field(t, m, "setting") != "cpu" {
			t.Fatalf("from %v, reason %v, setting %v; want %s, %q", field(t, m, "backend.from"), field(t, m, "backend.reason"), field(t, m, "setting"), from, reason)
		}
	}
	check(doctorJSON(t), "setting", "setting asked for cpu")
	t.Setenv("HARK_BACKEND", "cpu")
	check(doctorJSON(t), "HARK_BACKEND", "HARK_BACKEND asked for cpu")
	check(doctorJSON(t, "--backend", "cpu"), "--backend", "--backend asked for cpu")
	check(doctorJSON(t, "--backend=cpu"), "--backend", "--backend asked for cpu")
}

func TestUnknownBackendIsAUsageError(t *testing.T) {
	t.Setenv("HARK_BACKEND", "")
	ctx := context.Background()
	avail := "(available: auto, " + strings.Join(mlx.Backends(), ", ") + ")"
	want := `hark: --backend: unknown backend "nope" ` + avail + "\n"
	if code, out, errs := run(t, ctx, "--backend", "nope", "doctor"); code != ExitUsage || errs != want || out != "" {
		t.Fatalf("--backend nope: %d %q %q", code, out, errs)
	}
	t.Setenv("HARK_BACKEND", "nope")
	want = `hark: HARK_BACKEND: unknown backend "nope" ` + avail + "\n"
	if code, out, errs := run(t, ctx, "doctor", "--json"); code != ExitUsage || errs != want || out != "" {
		t.Fatalf("HARK_BACKEND=nope: %d %q %q", code, out, errs)
	}
	// The flag still wins over a bad HARK_BACKEND.
	if code, _, errs := run(t, ctx, "--backend", "cpu", "doctor"); code != ExitOK {
		t.Fatalf("--backend cpu over HARK_BACKEND=nope: %d %q", code, errs)
	}
	t.Setenv("HARK_BACKEND", "")
	if code, _, errs := run(t, ctx, "doctor", "extra"); code != ExitUsage || !strings.Contains(errs, "usage: hark doctor [--json]") {
		t.Fatalf("doctor extra: %d %q", code, errs)
	}
	if code, _, errs := run(t, ctx, "--backend"); code != ExitUsage || !strings.Contains(errs, "--backend needs a name") {
		t.Fatalf("--backend alone: %d %q", code, errs)
	}
}

// A database the CLI cannot read leaves the choice to auto and doctor
// says why, without touching the file.
func TestDoctorNamesAnUnreadableSetting(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HARK_HOME", home)
	t.Setenv("HARK_BACKEND", "")
	garbage := []byte(strings.Repeat("garbage!", 1000))
	path := filepath.Join(home, "hark.db")
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, context.Background(), "doctor")
	if code != ExitOK || !strings.Contains(out, "  setting  unreadable: cannot open database "+path) {
		t.Fatalf("doctor: %d %q %q", code, out, errs)
	}
	if b, _ := os.ReadFile(path); string(b) != string(garbage) {
		t.Fatal("the unreadable database was changed")
	}
}

func TestHelpListsDoctorAndDerivedBackends(t *testing.T) {
	code, out, _ := run(t, context.Background(), "help")
	if code != ExitOK || !strings.Contains(out, "hark doctor") || !strings.Contains(out, "--backend "+strings.Join(mlx.Backends(), "|")+"|auto CMD") {
		t.Fatalf("help: %d %q", code, out)
	}
}
