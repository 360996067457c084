package mlx_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"hark/mlx"
)

// fakeMLXC stands in for the MLX backend, which this test binary does not
// link: it computes with the cpu backend and describes itself as the mode
// of the test asks. Its open fails by default, so any other test of the
// package that selects "auto" still lands on the cpu.
type fakeMLXC struct {
	mlx.Backend
	info mlx.DeviceInfo
}

func (f fakeMLXC) Name() string             { return mlx.AutoPreference }
func (f fakeMLXC) Describe() mlx.DeviceInfo { return f.info }

var (
	fakeOnce sync.Once
	fakeMu   sync.Mutex
	// fakeMode is how the fake opens: "fail", "gpu" or "cpu".
	fakeMode = "fail"
)

const fakeFailure = "libmlxc not found (looked in /nowhere/a, /nowhere/b)"

// withFake registers the fake under AutoPreference once, sets its mode for
// this test and puts the cpu backend back afterwards.
func withFake(t *testing.T, mode string) {
	t.Helper()
	if err := mlx.SetBackend("cpu"); err != nil {
		t.Fatal(err)
	}
	cpu := mlx.CurrentBackend()
	fakeOnce.Do(func() {
		mlx.RegisterBackend(mlx.AutoPreference, func() (mlx.Backend, error) {
			fakeMu.Lock()
			defer fakeMu.Unlock()
			switch fakeMode {
			case "gpu":
				return fakeMLXC{cpu, mlx.DeviceInfo{Device: "gpu", GPU: true, Library: "/fake/libmlxc.so", Version: "0.9.9", Detail: "Fake GPU"}}, nil
			case "cpu":
				return fakeMLXC{cpu, mlx.DeviceInfo{Device: "cpu", Library: "/fake/libmlxc.so", Version: "0.9.9"}}, nil
			}
			return nil, errors.New(fakeFailure)
		})
	})
	fakeMu.Lock()
	fakeMode = mode
	fakeMu.Unlock()
	t.Setenv("HARK_BACKEND", "")
	t.Cleanup(func() {
		fakeMu.Lock()
		fakeMode = "fail"
		fakeMu.Unlock()
		if err := mlx.SetBackend("cpu"); err != nil {
			t.Error(err)
		}
	})
}

// check asserts a selection and that it is the backend now current.
func check(t *testing.T, sel mlx.Selection, err error, name, asked, from, reason string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Select: %v", err)
	}
	if sel.Name != name || sel.Asked != asked || sel.From != from || sel.Reason != reason {
		t.Fatalf("got {Name:%q Asked:%q From:%q Reason:%q}, want {%q %q %q %q}", sel.Name, sel.Asked, sel.From, sel.Reason, name, asked, from, reason)
	}
	if cur := mlx.CurrentBackend().Name(); cur != name {
		t.Fatalf("selection says %s but the current backend is %s", name, cur)
	}
}

func TestSelectPrecedence(t *testing.T) {
	withFake(t, "gpu")
	t.Setenv("HARK_BACKEND", "mlxc")
	sel, err := mlx.Select("cpu", "mlxc")
	check(t, sel, err, "cpu", "cpu", "--backend", "--backend asked for cpu")

	sel, err = mlx.Select("", "cpu")
	check(t, sel, err, "mlxc", "mlxc", "HARK_BACKEND", "HARK_BACKEND asked for mlxc (gpu, /fake/libmlxc.so, 0.9.9)")
	if !sel.Info.GPU || sel.Info.Detail != "Fake GPU" {
		t.Fatalf("device info not carried: %+v", sel.Info)
	}

	t.Setenv("HARK_BACKEND", "")
	sel, err = mlx.Select("", "cpu")
	check(t, sel, err, "cpu", "cpu", "setting", "setting asked for cpu")

	sel, err = mlx.Select("", "")
	check(t, sel, err, "mlxc", "auto", "default", "auto chose mlxc (gpu, /fake/libmlxc.so, 0.9.9)")

	sel, err = mlx.Select("", "auto")
	check(t, sel, err, "mlxc", "auto", "setting", "auto chose mlxc (gpu, /fake/libmlxc.so, 0.9.9)")
}

func TestSelectUnknownNameNamesItsSource(t *testing.T) {
	withFake(t, "gpu")
	for _, c := range []struct{ flag, env, setting, from string }{
		{"nope", "", "cpu", "--backend"},
		{"", "nope", "cpu", "HARK_BACKEND"},
		{"", "", "nope", "setting"},
		{"", "", "metal", "setting"},
	} {
		t.Setenv("HARK_BACKEND", c.env)
		sel, err := mlx.Select(c.flag, c.setting)
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
		if cur := mlx.CurrentBackend().Name(); cur != "cpu" {
			t.Fatalf("a failed Select changed the backend to %s", cur)
		}
	}
}

func TestSelectFailingBackendFallsBackWithReason(t *testing.T) {
	withFake(t, "fail")
	sel, err := mlx.Select("mlxc", "")
	check(t, sel, err, "cpu", "mlxc", "--backend", "using the cpu backend: mlxc backend: "+fakeFailure)

	sel, err = mlx.Select("", "")
	check(t, sel, err, "cpu", "auto", "default", "using the cpu backend: mlxc backend: "+fakeFailure)
	if sel.Info.Device != "cpu" {
		t.Fatalf("cpu device info: %+v", sel.Info)
	}

	// Probe tells the same reason and leaves the selection alone.
	if _, err := mlx.Probe("mlxc"); err == nil || !strings.Contains(err.Error(), fakeFailure) {
		t.Fatalf("Probe: %v", err)
	}
	if _, err := mlx.Probe("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Probe of an unknown name: %v", err)
	}
}

func TestSelectAutoSkipsABackendWithoutGPU(t *testing.T) {
	withFake(t, "cpu")
	sel, err := mlx.Select("", "")
	check(t, sel, err, "cpu", "auto", "default", "using the cpu backend: mlxc offers no GPU here, and Hark's cpu backend is faster than its CPU kernels")

	// Asked for by name, it is used even without a GPU.
	sel, err = mlx.Select("", "mlxc")
	check(t, sel, err, "mlxc", "mlxc", "setting", "setting asked for mlxc (cpu, /fake/libmlxc.so, 0.9.9)")

	info, err := mlx.Probe("mlxc")
	if err != nil || info.GPU || info.Library != "/fake/libmlxc.so" {
		t.Fatalf("Probe: %+v %v", info, err)
	}
	if cur := mlx.CurrentBackend().Name(); cur != "mlxc" {
		t.Fatalf("Probe changed the backend to %s", cur)
	}
}
