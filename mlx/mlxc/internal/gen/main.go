// Command gen writes the mlxc backend's function table from the mlx-c
// headers, so the Go side of every call is derived from the C declaration
// instead of being typed by hand. It reads every *.h under -headers, picks
// the functions named in -funcs (one per line, "?" suffix = optional
// symbol, # comments) and writes Go func-typed fields plus the symbol list
// the loader binds with purego.
//
//	go run ./internal/gen -headers /path/to/include/mlx/c -funcs funcs.txt -out ztable.go
//
// The output records where the headers came from: the mlx-c version and
// commit (from -mlxc-version/-mlxc-commit, or detected from the mlx-c
// source tree around -headers), and the MLX version they pair with.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	headers := flag.String("headers", "", "directory holding the mlx-c headers (mlx/c/*.h)")
	funcs := flag.String("funcs", "funcs.txt", "file listing the functions to bind")
	out := flag.String("out", "ztable.go", "output Go file")
	pkg := flag.String("pkg", "mlxc", "package of the output")
	mlxcVersion := flag.String("mlxc-version", "", "mlx-c version the headers are from (detected from git when empty)")
	mlxcCommit := flag.String("mlxc-commit", "", "mlx-c commit the headers are from (detected from git when empty)")
	mlxVersion := flag.String("mlx-version", "", "MLX version the headers pair with (read from mlx-c's CMakeLists.txt when empty)")
	flag.Parse()
	if *headers == "" {
		fail("-headers is required (set MLXC_HEADERS for go generate)")
	}
	decls, err := parseDir(*headers)
	if err != nil {
		fail(err.Error())
	}
	want, err := readList(*funcs)
	if err != nil {
		fail(err.Error())
	}
	src := source{mlxc: *mlxcVersion, commit: *mlxcCommit, mlx: *mlxVersion}
	src.detect(*headers)
	dtypes, err := parseDtypes(*headers)
	if err != nil {
		fail(err.Error())
	}
	code, err := generate(*pkg, decls, want, dtypes, src)
	if err != nil {
		fail(err.Error())
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gen:", msg)
	os.Exit(1)
}

// decl is one C function declaration.
type decl struct {
	name   string
	ret    string
	params []param
	header string
}

type param struct{ typ, name string }

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	// A declaration: return type, name, parameter list, semicolon.
	funcDecl = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_ \*]*?[\s\*])(mlx_[A-Za-z0-9_]+)\s*\(([^;{}]*)\)\s*;`)
	fnPtr    = regexp.MustCompile(`\(\s*\*\s*([A-Za-z0-9_]+)\s*\)\s*\([^)]*\)`)
)

func parseDir(dir string) (map[string]decl, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.h"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no headers (*.h) in %s", dir)
	}
	decls := map[string]decl{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		text := blockComment.ReplaceAllString(string(b), " ")
		text = lineComment.ReplaceAllString(text, "")
		for _, m := range funcDecl.FindAllStringSubmatch(text, -1) {
			ret := strings.TrimSpace(m[1])
			if strings.HasPrefix(ret, "typedef") || strings.Contains(ret, "return") {
				continue
			}
			d := decl{name: m[2], ret: normType(ret), header: filepath.Base(f)}
			ps, err := parseParams(m[3])
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", filepath.Base(f), m[2], err)
			}
			d.params = ps
			decls[d.name] = d
		}
	}
	return decls, nil
}

func parseParams(s string) ([]param, error) {
	s = strings.TrimSpace(strings.Join(strings.Fields(s), " "))
	if s == "" || s == "void" {
		return nil, nil
	}
	// Function-pointer parameters become "fnptr name".
	s = fnPtr.ReplaceAllStringFunc(s, func(p string) string {
		return "fnptr " + fnPtr.FindStringSubmatch(p)[1]
	})
	var ps []param
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		i := strings.LastIndexAny(part, " *")
		if i < 0 {
			return nil, fmt.Errorf("parameter %q has no name", part)
		}
		typ, name := part[:i+1], part[i+1:]
		if part[i] == ' ' {
			typ = part[:i]
		}
		if strings.Contains(typ, "fnptr") {
			typ = "fnptr"
		}
		ps = append(ps, param{typ: normType(typ), name: name})
	}
	return ps, nil
}

// normType drops const and spaces around '*': "const int *" → "int*".
func normType(t string) string {
	t = strings.ReplaceAll(t, "const ", "")
	t = strings.ReplaceAll(t, " ", "")
	return t
}

// goTypes maps the C types the bound functions use to Go. The small
// mlx-c structs travel as the words the C ABI passes them in: a handle
// (struct { void* ctx; }) as a pointer-sized word, an optional
// ({ T value; bool has_value; }, eight bytes) as one integer register on
// both amd64 and arm64.
var goTypes = map[string]string{
	"void":                   "",
	"int":                    "int32",
	"size_t":                 "uintptr",
	"float":                  "float32",
	"double":                 "float64",
	"bool":                   "bool",
	"uint32_t":               "uint32",
	"uint64_t":               "uint64",
	"char*":                  "string",
	"void*":                  "unsafe.Pointer",
	"fnptr":                  "uintptr",
	"mlx_error_handler_func": "uintptr",
	"mlx_dtype":              "dtype",
	"mlx_array":              "array",
	"mlx_array*":             "*array",
	"mlx_stream":             "stream",
	"mlx_stream*":            "*stream",
	"mlx_device":             "device",
	"mlx_device*":            "*device",
	"mlx_vector_array":       "vectorArray",
	"mlx_vector_array*":      "*vectorArray",
	"mlx_string":             "mlxString",
	"mlx_string*":            "*mlxString",
	"mlx_optional_int":       "optionalInt",
	"mlx_optional_float":     "optionalFloat",
	"mlx_optional_dtype":     "optionalDtype",
	"int*":                   "*int32",
	"size_t*":                "*uintptr",
	"bool*":                  "*bool",
	"float*":                 "*float32",
}

// goType maps a C type; returned data pointers (const T*) are unsafe.Pointer.
func goType(c string, isRet bool) (string, error) {
	if isRet && strings.HasSuffix(c, "*") {
		return "unsafe.Pointer", nil
	}
	if g, ok := goTypes[c]; ok {
		return g, nil
	}
	return "", fmt.Errorf("no Go mapping for C type %q", c)
}

func readList(path string) ([]listed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var l []listed
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		opt := strings.HasSuffix(line, "?")
		l = append(l, listed{strings.TrimSuffix(line, "?"), opt})
	}
	return l, sc.Err()
}

type listed struct {
	name     string
	optional bool
}

type source struct{ mlxc, commit, mlx string }

// detect fills what was not given from the mlx-c source tree the headers
// sit in (headers at <tree>/mlx/c), when they come from one.
func (s *source) detect(headers string) {
	tree := filepath.Clean(filepath.Join(headers, "..", ".."))
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", tree}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if s.mlxc == "" {
		s.mlxc = git("describe", "--tags")
	}
	if s.commit == "" {
		s.commit = git("rev-parse", "HEAD")
	}
	if s.mlx == "" {
		if b, err := os.ReadFile(filepath.Join(tree, "CMakeLists.txt")); err == nil {
			if m := regexp.MustCompile(`GIT_TAG\s+v?([0-9][0-9.]*)`).FindSubmatch(b); m != nil {
				s.mlx = string(m[1])
			}
		}
	}
	for _, p := range []*string{&s.mlxc, &s.commit, &s.mlx} {
		if *p == "" {
			*p = "unknown"
		}
	}
}

// parseDtypes reads the members of enum mlx_dtype, in order (their
// values are their positions).
func parseDtypes(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "array.h"))
	if err != nil {
		return nil, err
	}
	text := blockComment.ReplaceAllString(string(b), " ")
	m := regexp.MustCompile(`(?s)typedef\s+enum\s+mlx_dtype_\s*\{(.*?)\}`).FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("array.h declares no enum mlx_dtype")
	}
	var names []string
	for _, f := range strings.Split(m[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "=") {
			return nil, fmt.Errorf("enum mlx_dtype member %q has an explicit value; the generator assumes positions", f)
		}
		names = append(names, f)
	}
	return names, nil
}

// dtypeIdent turns MLX_FLOAT16 into dtFloat16.
func dtypeIdent(c string) string {
	w := strings.ToLower(strings.TrimPrefix(c, "MLX_"))
	return "dt" + strings.ToUpper(w[:1]) + w[1:]
}

func generate(pkg string, decls map[string]decl, want []listed, dtypes []string, src source) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by mlx/mlxc/internal/gen from the mlx-c headers; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\nimport \"unsafe\"\n\n", pkg)
	fmt.Fprintf(&b, "// The headers these bindings come from.\nconst (\n")
	fmt.Fprintf(&b, "\theadersMLXC = %q\n\theadersCommit = %q\n\theadersMLX = %q\n)\n\n", src.mlxc, src.commit, src.mlx)
	fmt.Fprintf(&b, "var _ unsafe.Pointer\n\n// mlx_dtype's members.\nconst (\n")
	for i, d := range dtypes {
		fmt.Fprintf(&b, "\t%s dtype = %d // %s\n", dtypeIdent(d), i, d)
	}
	fmt.Fprintf(&b, ")\n\n")
	fmt.Fprintf(&b, "// table holds one Go function per bound mlx-c function.\ntype table struct {\n")
	names := make([]listed, len(want))
	copy(names, want)
	sort.Slice(names, func(i, j int) bool { return names[i].name < names[j].name })
	for _, w := range names {
		d, ok := decls[w.name]
		if !ok {
			return nil, fmt.Errorf("%s is not declared in the headers", w.name)
		}
		var args []string
		for _, p := range d.params {
			g, err := goType(p.typ, false)
			if err != nil || g == "" {
				return nil, fmt.Errorf("%s: parameter %s: %v", d.name, p.name, err)
			}
			args = append(args, goIdent(p.name)+" "+g)
		}
		ret, err := goType(d.ret, true)
		if err != nil {
			return nil, fmt.Errorf("%s: result: %w", d.name, err)
		}
		if w.optional {
			fmt.Fprintf(&b, "\t// optional: nil when the library lacks it\n")
		}
		fmt.Fprintf(&b, "\t%s func(%s) %s // %s\n", d.name, strings.Join(args, ", "), ret, d.header)
	}
	fmt.Fprintf(&b, "}\n\n// symbols lists the table's functions for the loader.\nfunc (t *table) symbols() []symbol {\n\treturn []symbol{\n")
	for _, w := range names {
		fmt.Fprintf(&b, "\t\t{%q, %v, &t.%s},\n", w.name, w.optional, w.name)
	}
	fmt.Fprintf(&b, "\t}\n}\n")
	return format.Source(b.Bytes())
}

// goIdent keeps C parameter names usable in Go.
func goIdent(s string) string {
	switch s {
	case "type", "func", "range", "map", "string", "len", "cap", "select", "default", "chan", "go", "var", "package", "import":
		return s + "_"
	}
	return s
}
