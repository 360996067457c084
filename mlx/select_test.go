package mlx

import (
	"errors"
	"strings"
	"testing"
)

// These tests own the registry while they run: they swap in stand-ins for
// cpu and mlxc, so that what they check does not depend on which real
// backends this binary links or whether libmlxc loads here, and put the
// real registry back afterwards.

// stub is a backend that only names and describes itself; Select never
// computes with it.
type stub struct {
	Backend
	name string
	info DeviceInfo
}

func (s stub) Name() string         { return s.name }
func (s stub) Describe() DeviceInfo { return s.info }

const stubFailure = "libmlxc not found (looked in /nowhere/a, /nowhere/b)"

var (
	stubGPU    = DeviceInfo{Device: "gpu", GPU: true, Library: "/fake/libmlxc.so", Version: "0.9.9", Detail: "Fake GPU"}
	stubNoGPU  = DeviceInfo{Device: "cpu", Library: "/fake/libmlxc.so", Version: "0.9.9"}
	stubCPUDev = DeviceInfo{Device: "cpu", Detail: "stub features"}
)

// withRegistry replaces the registry by cpu and, unless mlxc is "absent",
// an mlxc that opens on a GPU ("gpu"), without one ("cpu"), or fails
// ("fail"); HARK_BACKEND is cleared.
func withRegistry(t *testing.T, mlxc string) {
	t.Helper()
	reg := map[string]func() (Backend, error){
		"cpu": func() (Backend, error) { return stub{name: "cpu", info: stubCPUDev}, nil },
	}
	switch mlxc {
	case "gpu", "cpu":
		info := map[string]DeviceInfo{"gpu": stubGPU, "cpu": stubNoGPU}[mlxc]
		reg[AutoPreference] = func() (Backend, error) { return stub{name: AutoPreference, info: info}, nil }
	case "fail":
		reg[AutoPreference] = func() (Backend, error) { return nil, errors.New(stubFailure) }
	}
	backendMu.Lock()
	saved, savedCur := backends, currentBackend
	backends, currentBackend = reg, nil
	backendMu.Unlock()
	t.Setenv("HARK_BACKEND", "")
	t.Cleanup(func() {
		backendMu.Lock()
		backends, currentBackend = saved, savedCur
		backendMu.Unlock()
	})
}

// check asserts a selection and that it is the backend now current.
func check(t *testing.T, sel Selection, err error, name, asked, from, reason string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Select: %v", err)
	}
	if sel.Name != name || sel.Asked != asked || sel.From != from || sel.Reason != reason {
		t.Fatalf("got {Name:%q Asked:%q From:%q Reason:%q}, want {%q %q %q %q}", sel.Name, sel.Asked, sel.From, sel.Reason, name, asked, from, reason)
	}
	if cur := CurrentBackend(); cur == nil || cur.Name() != name {
		t.Fatalf("selection says %s but the current backend is %v", name, cur)
	}
}

func TestSelectPrecedence(t *testing.T) {
	withRegistry(t, "gpu")
	t.Setenv("HARK_BACKEND", "mlxc")
	sel, err := Select("cpu", "mlxc")
	check(t, sel, err, "cpu", "cpu", "--backend", "--backend asked for cpu")
	if sel.Info != stubCPUDev {
		t.Fatalf("cpu device info not carried: %+v", sel.Info)
	}

	sel, err = Select("", "cpu")
	check(t, sel, err, "mlxc", "mlxc", "HARK_BACKEND", "HARK_BACKEND asked for mlxc (gpu, /fake/libmlxc.so, 0.9.9)")
	if sel.Info != stubGPU {
		t.Fatalf("device info not carried: %+v", sel.Info)
	}

	t.Setenv("HARK_BACKEND", "")
	sel, err = Select("", "cpu")
	check(t, sel, err, "cpu", "cpu", "setting", "setting asked for cpu")

	sel, err = Select("", "")
	check(t, sel, err, "mlxc", "auto", "default", "auto chose mlxc (gpu, /fake/libmlxc.so, 0.9.9)")

	sel, err = Select("", "auto")
	check(t, sel, err, "mlxc", "auto", "setting", "auto chose mlxc (gpu, /fake/libmlxc.so, 0.9.9)")
}

func TestSelectUnknownNameNamesItsSource(t *testing.T) {
	withRegistry(t, "gpu")
	if _, err := Select("cpu", ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, env, setting, from string }{
		{"nope", "", "cpu", "--backend"},
		{"", "nope", "cpu", "HARK_BACKEND"},
		{"", "", "nope", "setting"},
		{"", "", "metal", "setting"},
	} {
		t.Setenv("HARK_BACKEND", c.env)
		sel, err := Select(c.flag, c.setting)
		if err == nil {
			t.Fatalf("%+v: no error, got %+v", c, sel)
		}
		bad := c.flag + c.env
		if bad == "" {
			bad = c.setting
		}
		want := c.from + `: unknown backend "` + bad + `" (available: auto, cpu, mlxc)`
		if err.Error() != want {
			t.Fatalf("error %q, want %q", err, want)
		}
		if sel.From != c.from || sel.Asked != bad {
			t.Fatalf("selection on error: %+v", sel)
		}
		if cur := CurrentBackend().Name(); cur != "cpu" {
			t.Fatalf("a failed Select changed the backend to %s", cur)
		}
	}
}

func TestSelectFailingBackendFallsBackWithReason(t *testing.T) {
	withRegistry(t, "fail")
	sel, err := Select("mlxc", "")
	check(t, sel, err, "cpu", "mlxc", "--backend", "using the cpu backend: mlxc backend: "+stubFailure)

	sel, err = Select("", "")
	check(t, sel, err, "cpu", "auto", "default", "using the cpu backend: mlxc backend: "+stubFailure)
	if sel.Info != stubCPUDev {
		t.Fatalf("cpu device info: %+v", sel.Info)
	}

	// Probe tells the same reason and leaves the selection alone.
	if _, err := Probe("mlxc"); err == nil || err.Error() != "mlxc backend: "+stubFailure {
		t.Fatalf("Probe: %v", err)
	}
	if _, err := Probe("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Probe of an unknown name: %v", err)
	}
	if cur := CurrentBackend().Name(); cur != "cpu" {
		t.Fatalf("Probe changed the backend to %s", cur)
	}
}

func TestSelectAutoSkipsABackendWithoutGPU(t *testing.T) {
	withRegistry(t, "cpu")
	sel, err := Select("", "")
	check(t, sel, err, "cpu", "auto", "default", "using the cpu backend: mlxc offers no GPU here, and Hark's cpu backend is faster than its CPU kernels")

	// Asked for by name, it is used even without a GPU.
	sel, err = Select("", "mlxc")
	check(t, sel, err, "mlxc", "mlxc", "setting", "setting asked for mlxc (cpu, /fake/libmlxc.so, 0.9.9)")

	info, err := Probe("mlxc")
	if err != nil || info != stubNoGPU {
		t.Fatalf("Probe: %+v %v", info, err)
	}
}

func TestSelectWithoutTheMLXBackend(t *testing.T) {
	withRegistry(t, "absent")
	sel, err := Select("", "")
	check(t, sel, err, "cpu", "auto", "default", "using the cpu backend: this build has no mlxc backend")
	if _, err := Select("mlxc", ""); err == nil || err.Error() != `--backend: unknown backend "mlxc" (available: auto, cpu)` {
		t.Fatalf("--backend mlxc without it: %v", err)
	}
}
