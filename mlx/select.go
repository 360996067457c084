package mlx

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Selection is the outcome of choosing the compute backend, with the
// reason in words for Settings and `hark doctor`.
type Selection struct {
	// Name is the backend now in use.
	Name string
	// Asked is what was asked for ("auto" when nothing was), and From
	// where that came from: "--backend", "HARK_BACKEND", "setting" or
	// "default".
	Asked, From string
	// Reason says why Name is in use, in a sentence.
	Reason string
	// Info describes the device, when the backend can say.
	Info DeviceInfo
}

// AutoPreference is the backend auto picks when it opens and computes on
// a GPU. Its own CPU kernels are far slower than the cpu backend's, so
// without a GPU auto stays on "cpu".
const AutoPreference = "mlxc"

// Select chooses the backend, makes it current and says why. The first
// non-empty of flag (--backend), HARK_BACKEND and setting names it; "auto"
// or nothing means AutoPreference where it opens and offers a GPU, and the
// cpu backend otherwise. A named backend that fails to open (libmlxc
// missing, too old, of another architecture) falls back to the cpu with
// the failure as the reason; only a name that no backend has is an error.
func Select(flag, setting string) (Selection, error) {
	sel := Selection{Asked: "auto", From: "default"}
	for _, src := range []struct{ v, from string }{{flag, "--backend"}, {os.Getenv("HARK_BACKEND"), "HARK_BACKEND"}, {setting, "setting"}} {
		if src.v != "" {
			sel.Asked, sel.From = src.v, src.from
			break
		}
	}
	if sel.Asked != "auto" && !slices.Contains(Backends(), sel.Asked) {
		return sel, fmt.Errorf("%s: unknown backend %q (available: auto, %s)", sel.From, sel.Asked, strings.Join(Backends(), ", "))
	}
	want := sel.Asked
	if want == "auto" {
		want = AutoPreference
	}
	var why string
	if slices.Contains(Backends(), want) && want != "cpu" {
		b, err := openBackend(want)
		switch {
		case err != nil:
			why = err.Error()
		case sel.Asked == "auto" && !describe(b).GPU:
			why = fmt.Sprintf("%s offers no GPU here, and Hark's cpu backend is faster than its CPU kernels", want)
		default:
			sel.Name, sel.Info = want, describe(b)
			sel.Reason = fmt.Sprintf("%s (%s)", reasonFor(sel), deviceWords(sel.Info))
			setCurrent(b)
			return sel, nil
		}
	} else if want != "cpu" {
		why = fmt.Sprintf("this build has no %s backend", want)
	}
	b, err := openBackend("cpu")
	if err != nil {
		return sel, err
	}
	sel.Name, sel.Info = "cpu", describe(b)
	switch {
	case sel.Asked == "cpu":
		sel.Reason = reasonFor(sel)
	case why != "":
		sel.Reason = "using the cpu backend: " + why
	default:
		sel.Reason = "using the cpu backend"
	}
	setCurrent(b)
	return sel, nil
}

func reasonFor(sel Selection) string {
	if sel.Asked == "auto" {
		return "auto chose " + sel.Name
	}
	return fmt.Sprintf("%s asked for %s", sel.From, sel.Name)
}

func deviceWords(i DeviceInfo) string {
	w := []string{i.Device}
	if i.Library != "" {
		w = append(w, i.Library)
	}
	if i.Version != "" {
		w = append(w, i.Version)
	}
	return strings.Join(w, ", ")
}

func openBackend(name string) (Backend, error) {
	backendMu.RLock()
	open, ok := backends[name]
	backendMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("mlx: unknown backend %q", name)
	}
	b, err := open()
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", name, err)
	}
	return b, nil
}

func setCurrent(b Backend) {
	backendMu.Lock()
	currentBackend = b
	backendMu.Unlock()
}

func describe(b Backend) DeviceInfo {
	if d, ok := b.(Describer); ok {
		return d.Describe()
	}
	return DeviceInfo{Device: "cpu"}
}

// OpError is an op a backend could not run: one it does not have, or one
// that failed on the device (out of memory). Backends panic with it from
// op calls and return it from Eval; CatchOpError turns the panic back into
// an error at a request's boundary, so one request fails and the app lives
// on.
type OpError struct {
	Backend, Op string
	Err         error
}

func (e *OpError) Error() string { return fmt.Sprintf("%s backend: %s: %v", e.Backend, e.Op, e.Err) }
func (e *OpError) Unwrap() error { return e.Err }

var (
	// ErrUnsupported: the backend lacks the op.
	ErrUnsupported = errors.New("not supported by this backend")
	// ErrOutOfMemory: the device could not allocate.
	ErrOutOfMemory = errors.New("out of memory")
)

// CatchOpError recovers a panic carrying an *OpError into *err; any other
// panic goes on. Use it deferred at a request's boundary:
//
//	defer mlx.CatchOpError(&err)
func CatchOpError(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if oe, ok := r.(*OpError); ok {
		*err = oe
		return
	}
	panic(r)
}

// Probe opens the named backend without selecting it and describes its
// device, for `hark doctor` and Settings: it tells why a backend cannot
// be used as well as what it would run on.
func Probe(name string) (DeviceInfo, error) {
	b, err := openBackend(name)
	if err != nil {
		return DeviceInfo{}, err
	}
	return describe(b), nil
}
