package app

import (
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"hark/mlx"
)

// Two stand-in backends registered from this test binary under names of
// their own, so the real ones it links (cpu, and mlxc where built) stay as
// they are: one whose open fails with a message, one that computes with the
// cpu backend and says it is on a GPU.
const (
	failing    = "apptest-fail"
	gpuStub    = "apptest-gpu"
	stubReason = "libstub not found (looked in /nowhere)"
)

type gpuBackend struct{ mlx.Backend }

func (gpuBackend) Name() string { return gpuStub }
func (gpuBackend) Describe() mlx.DeviceInfo {
	return mlx.DeviceInfo{Device: "gpu", GPU: true, Library: "/fake/libstub.so", Version: "0.0-test"}
}

var stubsOnce sync.Once

func registerStubs(t *testing.T) {
	t.Helper()
	if err := mlx.SetBackend("cpu"); err != nil {
		t.Fatal(err)
	}
	cpu := mlx.CurrentBackend()
	stubsOnce.Do(func() {
		mlx.RegisterBackend(failing, "", func() (mlx.Backend, error) { return nil, errors.New(stubReason) })
		mlx.RegisterBackend(gpuStub, "", func() (mlx.Backend, error) { return gpuBackend{cpu}, nil })
	})
	t.Setenv("HARK_BACKEND", "")
	t.Cleanup(func() { mlx.SetBackend("cpu") })
}

func getInfo(t *testing.T, url string) Info {
	t.Helper()
	code, body := do(t, "GET", url+"/api/info", "", nil)
	var info Info
	if code != 200 || json.Unmarshal([]byte(body), &info) != nil {
		t.Fatalf("info: %d %s", code, body)
	}
	return info
}

func wantStatus(t *testing.T, got BackendStatus, name, asked, from, reason string) {
	t.Helper()
	if got.Name != name || got.Asked != asked || got.From != from || got.Reason != reason {
		t.Fatalf("backend %+v, want name %q asked %q from %q reason %q", got, name, asked, from, reason)
	}
	if cur := mlx.CurrentBackend().Name(); cur != name {
		t.Fatalf("Info says %s, but %s is in use", name, cur)
	}
}

var gpuWordHere = map[bool]string{true: "Metal", false: "GPU"}[runtime.GOOS == "darwin"]

// Start, a settings change and the environment all go through mlx.Select,
// and Info carries its outcome: the backend, what was asked, where from,
// and the failure that made it fall back.
func TestInfoReportsTheBackendAndWhy(t *testing.T) {
	registerStubs(t)
	_, srv := newTestApp(t)
	info := getInfo(t, srv.URL)
	// A new user's setting is auto; what auto gives depends on the build
	// (and on libmlxc here), so the expectation is mlx.Select's own.
	auto, err := mlx.Select("", "auto")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, info.Backend, auto.Name, "auto", "setting", auto.Reason)
	if info.Backend.Label != BackendLabel(auto.Name, auto.Info) || info.Backend.Device != deviceOf(auto.Info) {
		t.Fatalf("label/device: %+v", info.Backend)
	}
	names := mlx.Backends()
	if len(info.Backends) != len(names) {
		t.Fatalf("options %+v, want one per backend of %v", info.Backends, names)
	}
	for i, o := range info.Backends {
		if o.Name != names[i] {
			t.Fatalf("option %d is %q, want %q", i, o.Name, names[i])
		}
		switch o.Name {
		case "cpu":
			if o != (BackendOption{Name: "cpu", Label: "CPU"}) {
				t.Fatalf("cpu option %+v", o)
			}
		case failing:
			if o != (BackendOption{Name: failing, Label: failing, Unavailable: failing + " backend: " + stubReason}) {
				t.Fatalf("failing option %+v", o)
			}
		case gpuStub:
			if o != (BackendOption{Name: gpuStub, Label: gpuStub + " (" + gpuWordHere + ")"}) {
				t.Fatalf("GPU option %+v", o)
			}
		}
	}

	put := func(backend string) {
		t.Helper()
		code, body := do(t, "PUT", srv.URL+"/api/settings", `{"backend":"`+backend+`"}`, nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", backend, code, body)
		}
	}
	put("cpu")
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", "cpu", "setting", "setting asked for cpu")

	// A registered backend that cannot open may be chosen; cpu runs, and
	// the reason is the backend's own.
	put(failing)
	failed := "using the cpu backend: " + failing + " backend: " + stubReason
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", failing, "setting", failed)

	code, body := do(t, "PUT", srv.URL+"/api/settings", `{"backend":"metal"}`, nil)
	want := `backend \"metal\" is not available in this build (available: auto, ` + strings.Join(names, ", ") + `)`
	if code != 400 || !strings.Contains(body, want) {
		t.Fatalf("metal: %d %s, want %s", code, body, want)
	}
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", failing, "setting", failed)

	put(gpuStub)
	info = getInfo(t, srv.URL)
	wantStatus(t, info.Backend, gpuStub, gpuStub, "setting", "setting asked for "+gpuStub+" (gpu, /fake/libstub.so, 0.0-test)")
	if info.Backend.Label != gpuStub+" ("+gpuWordHere+")" || !info.Backend.Device.GPU || info.Backend.Device.Library != "/fake/libstub.so" {
		t.Fatalf("label/device: %+v", info.Backend)
	}
}

// --backend wins over HARK_BACKEND, which wins over the setting; a name no
// backend has never stops the app: it starts on cpu and says why.
func TestBackendPrecedenceAndBadNamesAtStart(t *testing.T) {
	registerStubs(t)
	start := func(flag string) Info {
		t.Helper()
		a, err := New(Options{DataDir: t.TempDir(), Stderr: io.Discard, Backend: flag})
		if err != nil {
			t.Fatalf("start with --backend %q: %v", flag, err)
		}
		defer a.Close()
		info, err := a.Service.GetInfo()
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	t.Setenv("HARK_BACKEND", failing)
	wantStatus(t, start("cpu").Backend, "cpu", "cpu", "--backend", "--backend asked for cpu")
	wantStatus(t, start("").Backend, "cpu", failing, "HARK_BACKEND", "using the cpu backend: "+failing+" backend: "+stubReason)

	avail := "(available: auto, " + strings.Join(mlx.Backends(), ", ") + ")"
	t.Setenv("HARK_BACKEND", "nope")
	wantStatus(t, start("").Backend, "cpu", "nope", "HARK_BACKEND", `HARK_BACKEND: unknown backend "nope" `+avail+`; using the cpu backend`)
	wantStatus(t, start("quantum").Backend, "cpu", "quantum", "--backend", `--backend: unknown backend "quantum" `+avail+`; using the cpu backend`)
}

// How users see a backend: MLX named for the device it computes on.
func TestBackendLabel(t *testing.T) {
	for _, c := range []struct {
		name string
		info mlx.DeviceInfo
		want string
	}{
		{"mlxc", mlx.DeviceInfo{Device: "gpu", GPU: true}, "MLX (" + gpuWordHere + ")"},
		{"mlxc", mlx.DeviceInfo{Device: "cpu"}, "MLX (CPU)"},
		{"mlxc", mlx.DeviceInfo{}, "MLX"},
		{"cpu", mlx.DeviceInfo{Device: "cpu", Detail: "avx2"}, "CPU"},
		{"other", mlx.DeviceInfo{}, "other"},
	} {
		if got := BackendLabel(c.name, c.info); got != c.want {
			t.Errorf("BackendLabel(%q, %+v) = %q, want %q", c.name, c.info, got, c.want)
		}
	}
}
