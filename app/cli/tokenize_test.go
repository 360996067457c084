package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code = Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}

type tokGolden struct {
	Text       string `json:"text"`
	IDs        []int  `json:"ids"`
	IDsSpecial []int  `json:"ids_special"`
	Decoded    string `json:"decoded"`
}

func readTokGolden(t *testing.T, dir string, n int) []tokGolden {
	f, err := os.Open(filepath.Join(dir, "golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tokGolden
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && len(out) < n {
		var g tokGolden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func TestTokenizeCommand(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "gemma3")
	cases := readTokGolden(t, dir, 40)
	var in strings.Builder
	for _, c := range cases {
		b, _ := json.Marshal(map[string]string{"text": c.Text})
		in.Write(b)
		in.WriteByte('\n')
	}
	for _, special := range []bool{false, true} {
		args := []string{"tokenize", "--tokenizer", dir}
		if special {
			args = append(args, "--special")
		}
		code, out, errs := runCLI(t, in.String(), args...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(cases) {
			t.Fatalf("got %d lines, want %d", len(lines), len(cases))
		}
		for i, l := range lines {
			var got struct{ IDs []int }
			if err := json.Unmarshal([]byte(l), &got); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			want := cases[i].IDs
			if special {
				want = cases[i].IDsSpecial
			}
			if len(want) == 0 && len(got.IDs) == 0 {
				continue
			}
			if !reflect.DeepEqual(got.IDs, want) {
				t.Errorf("special=%v %q: got %v want %v", special, cases[i].Text, got.IDs, want)
			}
		}
	}
}

func TestTokenizeDecodeCommand(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "qwen3")
	cases := readTokGolden(t, dir, 40)
	var in strings.Builder
	for _, c := range cases {
		b, _ := json.Marshal(map[string][]int{"ids": c.IDs})
		in.Write(b)
		in.WriteByte('\n')
	}
	code, out, errs := runCLI(t, in.String(), "tokenize", "--decode", "--special", "--tokenizer", filepath.Join(dir, "tokenizer.json"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for i, c := range cases {
		var got struct{ Text string }
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if got.Text != c.Decoded {
			t.Errorf("%v: got %q want %q", c.IDs, got.Text, c.Decoded)
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "qwen3")
	code, _, errs := runCLI(t, "{\"text\":\"ok\"}\n{\"txt\":1}\n", "tokenize", "--tokenizer", dir)
	if code != ExitError || !strings.Contains(errs, "line 2") {
		t.Errorf("bad line: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "{\"ids\":\"x\"}\n", "tokenize", "--decode", "--tokenizer", dir)
	if code != ExitError || !strings.Contains(errs, "line 1") {
		t.Errorf("bad ids: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "", "tokenize")
	if code != ExitUsage || !strings.Contains(errs, "--tokenizer") {
		t.Errorf("no flag: exit %d, stderr %q", code, errs)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	code, _, errs = runCLI(t, "", "tokenize", "--tokenizer", missing)
	if code != ExitError || !strings.Contains(errs, missing) {
		t.Errorf("missing dir: exit %d, stderr %q", code, errs)
	}
}
