package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/library/librarytest"
	"hark/mlx/mlxtest"
)

// tokenize --decode used to drop unknown ids silently, and a 48 MB line
// ran the process out of memory.
func TestTokenizeRefusesBadInput(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizers", "qwen3")
	code, out, errs := runCLI(t, `{"ids":[9707, 99999999]}`+"\n", "tokenize", "--tokenizer", dir, "--decode")
	if code != ExitError || !strings.Contains(errs, "id 99999999 is not in the tokenizer's vocabulary") || out != "" {
		t.Errorf("out-of-range id: exit %d out %q stderr %q", code, out, errs)
	}
	code, _, errs = runCLI(t, `{"ids":[-1]}`+"\n", "tokenize", "--tokenizer", dir, "--decode")
	if code != ExitError || !strings.Contains(errs, "id -1") {
		t.Errorf("negative id: exit %d stderr %q", code, errs)
	}
	big := `{"text":"` + strings.Repeat("a", 17<<20) + `"}` + "\n"
	code, _, errs = runCLI(t, big, "tokenize", "--tokenizer", dir)
	if code != ExitError || !strings.Contains(errs, "longer than 16 MB") {
		t.Errorf("17 MB line: exit %d stderr %q", code, errs)
	}
}

// A folder without config.json made chat say "no such model"; a library
// snapshot without one failed with a raw "no such file or directory".
func TestChatWithoutConfig(t *testing.T) {
	cache, home := t.TempDir(), t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HARK_HOME", home)
	librarytest.WriteSnapshot(t, cache, "o/noconf", "0123456789abcdef0123456789abcdef01234567", map[string][]byte{"model.safetensors": []byte("x"), "tokenizer.json": []byte("{}")})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "", "chat", "--model", dir, "-p", "hi")
	if code != ExitError || !strings.Contains(errs, "has no config.json") || strings.Contains(errs, "no such model") {
		t.Errorf("folder: exit %d stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "", "chat", "--model", "o/noconf", "-p", "hi")
	if code != ExitError || !strings.Contains(errs, "no config.json") || strings.Contains(errs, "no such file") {
		t.Errorf("snapshot: exit %d stderr %q", code, errs)
	}
}
