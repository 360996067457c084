package cli

import (
	"slices"
	"strings"
	"testing"

	"hark/engine/transcribe"
)

// The advanced knobs reach the engine's options, defaults stay OpenAI's,
// and a bad value is a usage error naming the flag.
func TestTranscribeAdvancedFlags(t *testing.T) {
	env := &Env{}
	f, err := parseTranscribeFlags(env, []string{"a.wav", "--model", "m", "--temperatures", "0,0.3,0.6",
		"--no-speech-threshold", "0.4", "--logprob-threshold", "-0.8", "--compression-ratio-threshold", "2",
		"--initial-prompt", "Hark", "--beam", "4"})
	if err != nil {
		t.Fatal(err)
	}
	o := f.options()
	if !slices.Equal(o.Temperatures, []float64{0, 0.3, 0.6}) || o.NoSpeechThreshold != 0.4 || o.LogProbThreshold != -0.8 ||
		o.CompressionRatioThreshold != 2 || o.InitialPrompt != "Hark" || o.BeamSize != 4 {
		t.Errorf("options: %+v", o)
	}
	f, err = parseTranscribeFlags(env, []string{"a.wav", "--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	o, def := f.options(), transcribe.DefaultOptions()
	if !slices.Equal(o.Temperatures, def.Temperatures) || o.NoSpeechThreshold != def.NoSpeechThreshold ||
		o.LogProbThreshold != def.LogProbThreshold || o.CompressionRatioThreshold != def.CompressionRatioThreshold {
		t.Errorf("defaults: %+v", o)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--temperatures", "0,0.5,0.2"}, "--temperatures: temperatures must rise"},
		{[]string{"--temperatures", "0,0.5", "--temperature", "0.2"}, "not both"},
		{[]string{"--no-speech-threshold", "2"}, "no-speech threshold"},
		{[]string{"--logprob-threshold", "1"}, "log probability threshold"},
		{[]string{"--compression-ratio-threshold", "0"}, "compression ratio threshold"},
	} {
		_, err := parseTranscribeFlags(env, append([]string{"a.wav", "--model", "m"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v; want %q", c.args, err, c.want)
		}
	}
}
