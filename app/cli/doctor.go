package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"hark/app"
	"hark/engine"
	"hark/mlx"
)

// doctorCommand is hark doctor, listed by Commands.
func doctorCommand() Command {
	return Command{
		Name:    "doctor",
		Usage:   "hark doctor [--json] [--model DIR|ID]",
		Summary: "show the compute backend in use and why, libmlxc, the CPU's features and the memory budget; with --model, where a loaded model's memory goes",
		Run:     runDoctor,
	}
}

// mlxBackend is the name the MLX backend (libmlxc) registers under.
const mlxBackend = "mlxc"

// doctorReport is what hark doctor prints; its JSON names are the --json
// output's.
type doctorReport struct {
	Version  string `json:"version"`
	Platform string `json:"platform"`
	// Backend is mlx.Select's choice, made as the app makes it.
	Backend app.BackendStatus `json:"backend"`
	// Setting is the saved Settings choice ("" before the app first ran);
	// SettingError why it could not be read.
	Setting      string              `json:"setting"`
	SettingError string              `json:"settingError,omitempty"`
	Backends     []app.BackendOption `json:"backends"`
	MLXC         mlxcReport          `json:"mlxc"`
	CPU          cpuReport           `json:"cpu"`
	Memory       memoryReport        `json:"memory"`
	// Model is --model's memory breakdown (absent without --model).
	Model *modelMemory `json:"model,omitempty"`
}

type mlxcReport struct {
	// Loaded says whether libmlxc opened here; Error says why not.
	Loaded  bool   `json:"loaded"`
	Library string `json:"library,omitempty"`
	Version string `json:"version,omitempty"`
	Device  string `json:"device,omitempty"`
	GPU     bool   `json:"gpu"`
	Detail  string `json:"detail,omitempty"`
	Error   string `json:"error,omitempty"`
}

type cpuReport struct {
	Cores    int    `json:"cores"`
	Features string `json:"features"`
}

// memoryReport is in bytes; 0 is unknown on this OS.
type memoryReport struct {
	Total     int64 `json:"total"`
	Available int64 `json:"available"`
	// Budget is what the engine checks a model's estimate against.
	Budget int64 `json:"budget"`
}

func runDoctor(ctx context.Context, env *Env, args []string) error {
	fs := NewFlagSet(env, "doctor")
	asJSON := fs.Bool("json", false, "print JSON")
	model := fs.String("model", "", "also load this model (a directory or library ID) and show where its memory goes")
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	r := diagnose(ctx, env.Selection)
	if *model != "" {
		m, err := measureModel(ctx, *model)
		if err != nil {
			return err
		}
		r.Model = m
	}
	if *asJSON {
		return writeJSON(env.Stdout, r)
	}
	return r.write(env.Stdout)
}

// diagnose reports sel, the choice Main made for every command, and
// gathers the rest.
func diagnose(ctx context.Context, sel mlx.Selection) doctorReport {
	r := doctorReport{Version: app.Version, Platform: runtime.GOOS + "/" + runtime.GOARCH, Backend: app.StatusOf(sel)}
	setting, err := savedBackend(ctx)
	if err != nil {
		r.SettingError = err.Error()
	}
	r.Setting = setting
	r.Backends = app.BackendOptions()
	r.MLXC = probeMLXC()
	r.CPU = cpuReport{Cores: runtime.NumCPU(), Features: cpuFeatures()}
	total, avail := systemMemory()
	r.Memory = memoryReport{Total: total, Available: avail, Budget: engine.MemoryBudget()}
	return r
}

// cpuFeatures is what the cpu backend says of the CPU it runs on: the
// features its kernels detected and use.
func cpuFeatures() string {
	info, err := mlx.Probe("cpu")
	if err != nil {
		return "unknown: " + err.Error()
	}
	return info.Detail
}

func probeMLXC() mlxcReport {
	if !slices.Contains(mlx.Backends(), mlxBackend) {
		return mlxcReport{Error: "this build has no " + mlxBackend + " backend"}
	}
	info, err := mlx.Probe(mlxBackend)
	if err != nil {
		return mlxcReport{Error: err.Error()}
	}
	return mlxcReport{Loaded: true, Library: info.Library, Version: info.Version, Device: info.Device, GPU: info.GPU, Detail: info.Detail}
}

func (r doctorReport) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, a...)) }
	line("hark", "%s (%s)", r.Version, r.Platform)
	b := r.Backend
	line("backend", "%s (%s)", b.Name, b.Label)
	line("  asked", "%s, from %s", b.Asked, b.From)
	line("  why", "%s", b.Reason)
	if d := deviceLine(b.Device); d != "" {
		line("  device", "%s", d)
	}
	switch {
	case r.SettingError != "":
		line("  setting", "unreadable: %s", r.SettingError)
	case r.Setting == "":
		line("  setting", "none saved yet")
	default:
		line("  setting", "%s", r.Setting)
	}
	var opts []string
	for _, o := range r.Backends {
		s := o.Name
		if o.Unavailable != "" {
			s += " (cannot open here)" // why is in the json, and for mlxc on the libmlxc line
		}
		opts = append(opts, s)
	}
	line("backends", "auto, %s", strings.Join(opts, ", "))
	if m := r.MLXC; m.Loaded {
		line("libmlxc", "%s", m.Library)
		line("  version", "%s", orUnknown(m.Version))
		line("  device", "%s", deviceLine(app.Device{Device: m.Device, GPU: m.GPU, Detail: m.Detail}))
	} else {
		line("libmlxc", "not loaded: %s", m.Error)
	}
	line("cpu", "%d cores; %s", r.CPU.Cores, r.CPU.Features)
	line("memory", "%s total, %s available", bytesOrUnknown(r.Memory.Total), bytesOrUnknown(r.Memory.Available))
	if r.Memory.Budget > 0 {
		line("  budget", "%s: a model estimated to need more is refused", humanBytes(r.Memory.Budget))
	} else {
		line("  budget", "unknown on this OS: models load unchecked")
	}
	if r.Model != nil {
		r.Model.write(line)
	}
	return tw.Flush()
}

func deviceLine(d app.Device) string {
	var w []string
	if d.Device != "" {
		w = append(w, d.Device)
	}
	if d.Detail != "" {
		w = append(w, d.Detail)
	}
	return strings.Join(w, ": ")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func bytesOrUnknown(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return humanBytes(n)
}
