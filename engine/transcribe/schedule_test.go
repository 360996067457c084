package transcribe

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseTemperatures(t *testing.T) {
	got, err := ParseTemperatures(" 0, 0.2,0.4 ,1")
	if err != nil || !slices.Equal(got, []float64{0, 0.2, 0.4, 1}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"":                               "not a number",
		"0,x":                            `"x" is not a number`,
		"0,1.5":                          "want 0 to 1",
		"-0.1":                           "want 0 to 1",
		"0.4,0.2":                        "must rise",
		"0,0":                            "must rise",
		"NaN":                            "want 0 to 1",
		"0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1": "at most 10",
	} {
		if _, err := ParseTemperatures(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v; want %q", in, err, want)
		}
	}
}

func TestCheckThresholds(t *testing.T) {
	d := DefaultOptions()
	if err := CheckThresholds(d.NoSpeechThreshold, d.LogProbThreshold, d.CompressionRatioThreshold); err != nil {
		t.Fatalf("OpenAI's defaults refused: %v", err)
	}
	if err := CheckThresholds(None, None, None); err != nil {
		t.Fatalf("None refused: %v", err)
	}
	for _, c := range []struct {
		ns, lp, cr float64
		want       string
	}{
		{1.5, -1, 2.4, "no-speech"},
		{0.6, 0.5, 2.4, "log probability"},
		{0.6, math.Inf(-1), 2.4, "log probability"},
		{0.6, -1, 0, "compression ratio"},
		{0.6, -1, math.Inf(1), "compression ratio"},
	} {
		if err := CheckThresholds(c.ns, c.lp, c.cr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v/%v/%v: err %v; want %q", c.ns, c.lp, c.cr, err, c.want)
		}
	}
}
