package mlxc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// EnvLibrary names the variable that points at libmlxc. When it is set,
// only that file is tried: a user who names a library wants that one, not
// another found elsewhere.
const EnvLibrary = "HARK_MLXC"

// library is a loaded libmlxc with its bound functions.
type library struct {
	path    string
	version string // MLX's version, as mlx_version reports it
	handle  uintptr
	table
	// optional symbols the library lacks
	missingOptional []string
}

// candidates lists where to look for libmlxc, in order.
func candidates() []string {
	if p := os.Getenv(EnvLibrary); p != "" {
		return []string{p}
	}
	var c []string
	for _, d := range platformDirs() {
		c = append(c, filepath.Join(d, libName))
	}
	// Last the plain soname, which the dynamic loader resolves through
	// the system paths (and DYLD/LD_LIBRARY_PATH).
	return append(c, libName)
}

var (
	loadMu sync.Mutex
	loaded *library
)

// load returns the process's libmlxc, opening it on first success. Each
// failure names every path tried and why it was rejected.
func load() (*library, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		return loaded, nil
	}
	var reasons []string
	for _, p := range candidates() {
		lib, err := openLibrary(p)
		if err == nil {
			loaded = lib
			return lib, nil
		}
		reasons = append(reasons, err.Error())
	}
	return nil, fmt.Errorf("libmlxc not usable: %s", strings.Join(reasons, "; "))
}

// openLibrary opens and checks one candidate. It never calls into a
// library before the error handler is installed: mlx-c's default one
// exits the process.
func openLibrary(path string) (*library, error) {
	if strings.ContainsRune(path, filepath.Separator) {
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such file", path)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	// dlerror is per thread: the goroutine must not move between dlopen
	// and the dlerror purego reads after it, or the reason comes back
	// empty (seen as a flaky reason in Settings and hark doctor).
	runtime.LockOSThread()
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be loaded (not a library, or built for another architecture): %v", path, err)
	}
	lib := &library{path: path, handle: h}
	var missing []string
	for _, s := range lib.table.symbols() {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil || addr == 0 {
			if s.optional {
				lib.missingOptional = append(lib.missingOptional, s.name)
				continue
			}
			missing = append(missing, s.name)
			continue
		}
		purego.RegisterFunc(s.fn, addr)
	}
	if len(missing) > 0 {
		_ = purego.Dlclose(h)
		shown := missing
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(missing)-5))
		}
		return nil, fmt.Errorf("%s: not the mlx-c these bindings were generated from (mlx-c %s for MLX %s): it lacks %s",
			path, headersMLXC, headersMLX, strings.Join(shown, ", "))
	}
	lib.mlx_set_error_handler(errorCallback(), nil, 0)
	v, err := lib.mlxVersion()
	if err != nil {
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !sameMinor(v, headersMLX) {
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("%s: reports MLX %s, but these bindings are for MLX %s (mlx-c %s); install the matching mlx-c",
			path, v, headersMLX, headersMLXC)
	}
	lib.version = v
	if abs, err := filepath.Abs(path); err == nil && strings.ContainsRune(path, filepath.Separator) {
		lib.path = abs
	}
	return lib, nil
}

func (l *library) mlxVersion() (string, error) {
	s := l.mlx_string_new()
	defer l.mlx_string_free(s)
	if rc := l.mlx_version(&s); rc != 0 {
		return "", fmt.Errorf("mlx_version failed: %s", takeError())
	}
	return goString(l.mlx_string_data(s)), nil
}

// sameMinor reports whether versions a and b agree on major.minor: mlx-c's
// C API changes between MLX minor releases, so a library of another minor
// version may have the same symbols with other arguments.
func sameMinor(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 3), strings.SplitN(b, ".", 3)
	if len(pa) < 2 || len(pb) < 2 {
		return false
	}
	for i := 0; i < 2; i++ {
		x, e1 := strconv.Atoi(pa[i])
		y, e2 := strconv.Atoi(pb[i])
		if e1 != nil || e2 != nil || x != y {
			return false
		}
	}
	return true
}

// goString copies a NUL-terminated C string.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(p, i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// The error handler. mlx-c calls it just before a function returns
// non-zero; it records the message for the caller on the same thread to
// take. All MLX calls run on the one worker thread, so one slot serves.
var (
	errOnce sync.Once
	errCB   uintptr
	errMu   sync.Mutex
	errMsg  string
)

func errorCallback() uintptr {
	errOnce.Do(func() {
		errCB = purego.NewCallback(func(msg *byte, _ unsafe.Pointer) {
			s := goString(unsafe.Pointer(msg))
			errMu.Lock()
			errMsg = s
			errMu.Unlock()
		})
	})
	return errCB
}

// takeError returns and clears the last message from MLX.
func takeError() string {
	errMu.Lock()
	defer errMu.Unlock()
	m := errMsg
	errMsg = ""
	if m == "" {
		m = "MLX reported an error without a message"
	}
	return m
}
