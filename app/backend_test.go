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

// fakeMLXC stands in for the MLX backend, which this test binary does not
// link: its open fails with fakeFailure unless a test asks for a GPU, and
// then it computes with the cpu backend.
type fakeMLXC struct{ mlx.Backend }

func (fakeMLXC) Name() string { return "mlxc" }
func (fakeMLXC) Describe() mlx.DeviceInfo {
	return mlx.DeviceInfo{Device: "gpu", GPU: true, Library: "/fake/libmlxc.so", Version: "0.0-test"}
}

const fakeFailure = "libmlxc not found (looked in /nowhere)"

var (
	fakeOnce sync.Once
	fakeMu   sync.Mutex
	fakeGPU  bool
)

func registerFake(t *testing.T, gpu bool) {
	t.Helper()
	if err := mlx.SetBackend("cpu"); err != nil {
		t.Fatal(err)
	}
	cpu := mlx.CurrentBackend()
	fakeOnce.Do(func() {
		mlx.RegisterBackend("mlxc", func() (mlx.Backend, error) {
			fakeMu.Lock()
			defer fakeMu.Unlock()
			if fakeGPU {
				return fakeMLXC{cpu}, nil
			}
			return nil, errors.New(fakeFailure)
		})
	})
	fakeMu.Lock()
	fakeGPU = gpu
	fakeMu.Unlock()
	t.Setenv("HARK_BACKEND", "")
	t.Cleanup(func() {
		fakeMu.Lock()
		fakeGPU = false
		fakeMu.Unlock()
		mlx.SetBackend("cpu")
	})
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

// Start, a settings change and the environment all go through mlx.Select,
// and Info carries its outcome: the backend, what was asked, where from,
// and the failure that made it fall back.
func TestInfoReportsTheBackendAndWhy(t *testing.T) {
	registerFake(t, false)
	_, srv := newTestApp(t)
	info := getInfo(t, srv.URL)
	// A new user's setting is auto.
	wantStatus(t, info.Backend, "cpu", "auto", "setting", "using the cpu backend: mlxc backend: "+fakeFailure)
	if info.Backend.Label != "CPU" || info.Backend.Device.Device != "cpu" {
		t.Fatalf("label/device: %+v", info.Backend)
	}
	want := []BackendOption{{Name: "cpu", Label: "CPU"}, {Name: "mlxc", Label: "MLX", Unavailable: "mlxc backend: " + fakeFailure}}
	if len(info.Backends) != 2 || info.Backends[0] != want[0] || info.Backends[1] != want[1] {
		t.Fatalf("options %+v, want %+v", info.Backends, want)
	}

	code, body := do(t, "PUT", srv.URL+"/api/settings", `{"backend":"cpu"}`, nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", "cpu", "setting", "setting asked for cpu")

	// A registered backend that cannot open may be chosen; cpu runs, and
	// the reason is the backend's own.
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":"mlxc"}`, nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", "mlxc", "setting", "using the cpu backend: mlxc backend: "+fakeFailure)

	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":"metal"}`, nil)
	if code != 400 || !strings.Contains(body, `backend \"metal\" is not available in this build (available: auto, cpu, mlxc)`) {
		t.Fatalf("metal: %d %s", code, body)
	}
	wantStatus(t, getInfo(t, srv.URL).Backend, "cpu", "mlxc", "setting", "using the cpu backend: mlxc backend: "+fakeFailure)

	// Once it opens on a GPU, auto takes it.
	fakeMu.Lock()
	fakeGPU = true
	fakeMu.Unlock()
	code, body = do(t, "PUT", srv.URL+"/api/settings", `{"backend":"auto"}`, nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	info = getInfo(t, srv.URL)
	wantStatus(t, info.Backend, "mlxc", "auto", "setting", "auto chose mlxc (gpu, /fake/libmlxc.so, 0.0-test)")
	gpu := map[string]string{"darwin": "Metal"}[runtime.GOOS]
	if gpu == "" {
		gpu = "GPU"
	}
	if info.Backend.Label != "MLX ("+gpu+")" || !info.Backend.Device.GPU || info.Backend.Device.Library != "/fake/libmlxc.so" {
		t.Fatalf("label/device: %+v", info.Backend)
	}
	if info.Backends[1] != (BackendOption{Name: "mlxc", Label: "MLX (" + gpu + ")"}) {
		t.Fatalf("options: %+v", info.Backends)
	}
}

// --backend wins over HARK_BACKEND, which wins over the setting; a name no
// backend has never stops the app: it starts on cpu and says why.
func TestBackendPrecedenceAndBadNamesAtStart(t *testing.T) {
	registerFake(t, false)
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
	t.Setenv("HARK_BACKEND", "mlxc")
	wantStatus(t, start("cpu").Backend, "cpu", "cpu", "--backend", "--backend asked for cpu")
	wantStatus(t, start("").Backend, "cpu", "mlxc", "HARK_BACKEND", "using the cpu backend: mlxc backend: "+fakeFailure)

	t.Setenv("HARK_BACKEND", "nope")
	wantStatus(t, start("").Backend, "cpu", "nope", "HARK_BACKEND",
		`HARK_BACKEND: unknown backend "nope" (available: auto, cpu, mlxc); using the cpu backend`)
	wantStatus(t, start("quantum").Backend, "cpu", "quantum", "--backend",
		`--backend: unknown backend "quantum" (available: auto, cpu, mlxc); using the cpu backend`)
}
