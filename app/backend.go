package app

import (
	"fmt"
	"runtime"
	"strings"

	"hark/mlx"
)

// BackendStatus is the compute backend in use and why, as Info reports it
// to Settings. mlx.Select makes the choice; this only carries it.
type BackendStatus struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Asked is what was asked for ("auto" when nothing was) and From where
	// that came from: "--backend", "HARK_BACKEND", "setting" or "default".
	Asked  string `json:"asked"`
	From   string `json:"from"`
	Reason string `json:"reason"`
	Device Device `json:"device"`
}

// Device is mlx.DeviceInfo with JSON names.
type Device struct {
	Device  string `json:"device"`
	GPU     bool   `json:"gpu"`
	Library string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// BackendOption is one choice the Settings picker offers: a backend this
// build has, with why it cannot open here when it cannot.
type BackendOption struct {
	Name        string `json:"name"`
	Label       string `json:"label"`
	Unavailable string `json:"unavailable,omitempty"`
}

// gpuWord names the GPU API a backend computes through on this OS.
var gpuWord = map[bool]string{true: "Metal", false: "GPU"}[runtime.GOOS == "darwin"]

// BackendLabel is how Settings and `hark doctor` name a backend: "CPU",
// "MLX (Metal)" when MLX computes on the GPU, "MLX (CPU)" when it does not.
func BackendLabel(name string, d mlx.DeviceInfo) string {
	title := mlx.BackendTitle(name)
	switch {
	case d.GPU:
		return fmt.Sprintf("%s (%s)", title, gpuWord)
	case name != "cpu" && d.Device != "":
		return fmt.Sprintf("%s (%s)", title, strings.ToUpper(d.Device))
	}
	return title
}

func deviceOf(d mlx.DeviceInfo) Device {
	return Device{Device: d.Device, GPU: d.GPU, Library: d.Library, Version: d.Version, Detail: d.Detail}
}

// StatusOf turns a selection into what Info reports.
func StatusOf(sel mlx.Selection) BackendStatus {
	return BackendStatus{Name: sel.Name, Label: BackendLabel(sel.Name, sel.Info), Asked: sel.Asked,
		From: sel.From, Reason: sel.Reason, Device: deviceOf(sel.Info)}
}

// selectBackend is mlx.Select for a running app, which must start
// whatever is asked: a name no backend has (a stray HARK_BACKEND) leaves
// the cpu backend in use with the error as the reason.
func selectBackend(flag, setting string) mlx.Selection {
	sel, err := mlx.Select(flag, setting)
	if err == nil {
		return sel
	}
	cpu, cpuErr := mlx.Select("cpu", "")
	if cpuErr != nil {
		// Only a build without the cpu backend gets here.
		return mlx.Selection{Asked: sel.Asked, From: sel.From, Reason: fmt.Sprintf("%v; and the cpu backend: %v", err, cpuErr)}
	}
	cpu.Asked, cpu.From = sel.Asked, sel.From
	cpu.Reason = fmt.Sprintf("%v; using the cpu backend", err)
	return cpu
}

// BackendOptions lists every backend this build has, probing each so the
// picker can say which cannot open here and why.
func BackendOptions() []BackendOption {
	var opts []BackendOption
	for _, name := range mlx.Backends() {
		info, err := mlx.Probe(name)
		o := BackendOption{Name: name, Label: BackendLabel(name, info)}
		if err != nil {
			o.Unavailable = err.Error()
		}
		opts = append(opts, o)
	}
	return opts
}
