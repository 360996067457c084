package library

import (
	"strings"
	"testing"
)

func TestStartersParse(t *testing.T) {
	s, err := Starters()
	must(t, err)
	kinds := map[string]int{}
	for _, m := range s {
		kinds[string(m.Kind)]++
		if m.Bytes != m.Params*int64(m.Bits)/8 {
			t.Errorf("%s: bytes %d", m.Repo, m.Bytes)
		}
	}
	if kinds["chat"] == 0 || kinds["speech"] == 0 {
		t.Errorf("the shelf needs chat and speech models: %v", kinds)
	}
	for bad, want := range map[string]string{
		`{"models":[{"repo":"../x","kind":"chat","model_type":"llama","params":1,"bits":4}]}`:  "not a valid name",
		`{"models":[{"repo":"a/b","kind":"vision","model_type":"llama","params":1,"bits":4}]}`: "kind",
		`{"models":[{"repo":"a/b","kind":"chat","model_type":"llama","params":1,"bits":0}]}`:   "bits",
		`{"models":`: "starters.json",
	} {
		if _, err := parseStarters([]byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
}
