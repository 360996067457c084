package llm_test

import (
	"encoding/json"
	"testing"

	"hark/models/profile"
)

// The families' config checks run on every config.json the library
// scans, so a hostile one must get an answer, not a panic or an
// allocation its numbers ask for. Seeds: every family's generated config.
func FuzzFamilyConfigs(f *testing.F) {
	for _, fam := range families() {
		js, err := json.Marshal(fam.gen.Config)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := profile.Parse(data)
		if err != nil {
			return
		}
		profile.Resolve(cfg)
		profile.ActiveParams(cfg, 1<<40)
	})
}
