package app

import (
	"slices"
	"strings"
	"testing"

	"hark/engine"
	"hark/library/store"
	"hark/models/nn"
)

// Info's KV choices, over HTTP and through the desktop binding, are nn's
// list plus float32, each once, with engine.DefaultKV's marked, and each
// one a setting Settings and the engine accept.
func TestInfoKVChoicesAreTheEngineList(t *testing.T) {
	a, srv := newTestApp(t)
	bound, err := a.Service.GetInfo()
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(nn.KVBitsValues), nn.KVFloat32Bits)
	slices.Sort(want)
	for name, info := range map[string]Info{"HTTP": getInfo(t, srv.URL), "binding": bound} {
		var got []int
		defaults := 0
		for _, c := range info.KVBitsChoices {
			got = append(got, c.Bits)
			if c.Label == "" {
				t.Errorf("%s: choice %d has no label", name, c.Bits)
			}
			if c.Default {
				defaults++
				if engine.ResolveKV(nn.KVQuant{Bits: c.Bits}) != engine.DefaultKV {
					t.Errorf("%s: %d marked the default, the engine's is %+v", name, c.Bits, engine.DefaultKV)
				}
			}
			// The label names the default by the flag, not by its bits.
			if strings.HasSuffix(c.Label, " (default)") != c.Default {
				t.Errorf("%s: choice %+v: label and default flag disagree", name, c)
			}
			if err := (store.Settings{Backend: "auto", KVBits: c.Bits}).Validate(); err != nil {
				t.Errorf("%s: Settings refuse choice %d: %v", name, c.Bits, err)
			}
			if err := (nn.KVQuant{Bits: c.Bits}).Validate(); err != nil {
				t.Errorf("%s: the engine refuses choice %d: %v", name, c.Bits, err)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || defaults != 1 {
			t.Errorf("%s: choices %+v, want bits %v with one default", name, info.KVBitsChoices, want)
		}
		if len(info.KVBitsChoices) > 0 && !info.KVBitsChoices[0].Default {
			t.Errorf("%s: the default is not listed first: %+v", name, info.KVBitsChoices)
		}
		// After the default, from the least compressed to the most.
		if len(info.KVBitsChoices) > 1 && !slices.IsSortedFunc(info.KVBitsChoices[1:], func(a, b KVChoice) int { return b.Bits - a.Bits }) {
			t.Errorf("%s: the others are not from the most bits to the fewest: %+v", name, info.KVBitsChoices)
		}
	}
}
