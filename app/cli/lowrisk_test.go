package cli

import (
	"strings"
	"testing"

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
