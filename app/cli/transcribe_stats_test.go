package cli

import (
	"regexp"
	"strconv"
	"testing"

	"hark/engine"
	"hark/mlx/mlxtest"
)

// --stats gives the peak RSS in the unit every other size in Hark uses
// (engine.FormatBytes: MB = 10^6), not MiB labelled MB, which read about
// 5% low beside the Library's figures.
func TestTranscribeStatsPeakRSSUnit(t *testing.T) {
	if peakRSS() == 0 {
		t.Skip("peak RSS is not reported on this platform")
	}
	model := mlxtest.Assets(t, "whisper", "golden", "model")
	jfk := mlxtest.Assets(t, "audio", "jfk.wav")
	code, _, stderr := runCLI(t, "", "transcribe", jfk, "--model", model, "--temperature", "0", "--language", "en", "--stats")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	// The peak only grows, and this test does little after the line is
	// written, so the figure now is the one printed, give or take.
	after := peakRSS()
	m := regexp.MustCompile(`(?m)^peak RSS +([0-9.]+) (MB|GB)$`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no peak RSS line in the format engine.FormatBytes writes:\n%s", stderr)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	scale := 1e6
	if m[2] == "GB" {
		scale = 1e9
	}
	printed := v * scale
	if want := engine.FormatBytes(after); printed > float64(after)+0.05*scale || printed < 0.98*float64(after)-0.05*scale {
		t.Errorf("peak RSS printed as %s %s; the process's peak is %d bytes (%s)", m[1], m[2], after, want)
	}
}
