package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `/* Copyright */
#ifndef X
typedef struct mlx_array_ { void* ctx; } mlx_array;
typedef enum mlx_dtype_ {
  MLX_BOOL,
  MLX_FLOAT32,
} mlx_dtype;
typedef void (*mlx_error_handler_func)(const char* msg, void* data);
/**
 * Adds. // not code
 */
int mlx_add(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b /* may be null */,
    const mlx_stream s);
void mlx_set_error_handler(
    mlx_error_handler_func handler,
    void* data,
    void (*dtor)(void*));
const float* mlx_array_data_float32(const mlx_array arr);
int mlx_rope(mlx_array* res, int dims, mlx_optional_float base, const int* shape, size_t n, const char* mode);
int mlx_weird(mlx_closure c);
#endif
`

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "array.h"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	decls, err := parseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	dts, err := parseDtypes(dir)
	if err != nil || strings.Join(dts, ",") != "MLX_BOOL,MLX_FLOAT32" {
		t.Fatalf("dtypes %v, %v", dts, err)
	}
	want := []listed{{"mlx_add", false}, {"mlx_set_error_handler", false}, {"mlx_array_data_float32", true}, {"mlx_rope", false}}
	code, err := generate("p", decls, want, dts, source{"v1", "abc", "0.31.2"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(code)
	for _, w := range []string{
		"DO NOT EDIT",
		`headersCommit = "abc"`,
		"dtFloat32 dtype = 1",
		"mlx_add func(res *array, a array, b array, s stream) int32",
		"mlx_set_error_handler func(handler uintptr, data unsafe.Pointer, dtor uintptr)",
		"mlx_array_data_float32 func(arr array) unsafe.Pointer",
		"mlx_rope func(res *array, dims int32, base optionalFloat, shape *int32, n uintptr, mode string) int32",
		`{"mlx_array_data_float32", true, &t.mlx_array_data_float32}`,
	} {
		if !strings.Contains(strings.Join(strings.Fields(s), " "), w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	// a type without a Go mapping is an error naming the function, not a
	// silent guess
	if _, err := generate("p", decls, []listed{{"mlx_weird", false}}, dts, source{}); err == nil || !strings.Contains(err.Error(), "mlx_weird") {
		t.Fatalf("unmapped type: %v", err)
	}
	if _, err := generate("p", decls, []listed{{"mlx_nope", false}}, dts, source{}); err == nil || !strings.Contains(err.Error(), "not declared") {
		t.Fatalf("unknown function: %v", err)
	}
}

// With MLXC_HEADERS set (the mlx-c source's mlx/c), the committed table
// must be what the generator makes from them now.
func TestTableUpToDate(t *testing.T) {
	h := os.Getenv("MLXC_HEADERS")
	if h == "" {
		t.Skip("MLXC_HEADERS is not set: cannot check ztable.go against the mlx-c headers")
	}
	decls, err := parseDir(h)
	if err != nil {
		t.Fatal(err)
	}
	dts, err := parseDtypes(h)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readList("../../funcs.txt")
	if err != nil {
		t.Fatal(err)
	}
	src := source{}
	src.detect(h)
	code, err := generate("mlxc", decls, want, dts, src)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../ztable.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != string(code) {
		t.Fatal("ztable.go is stale: run MLXC_HEADERS=... go generate ./mlx/mlxc")
	}
}
