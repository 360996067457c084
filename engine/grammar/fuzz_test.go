package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// FuzzCompile feeds arbitrary schemas to the compiler. A schema it accepts
// must never lead a walk into a dead end, and every walk must end in JSON
// the grammar itself accepts.
func FuzzCompile(f *testing.F) {
	for _, s := range walkSchemas {
		f.Add([]byte(s), uint64(1))
	}
	for _, s := range []string{
		`{"type":"string","pattern":"^(a|bc)*[^x-z]{1,3}$"}`,
		`{"type":["integer","string"],"minimum":-3,"maximum":3,"maxLength":2}`,
		`{"properties":{"a":{"type":"array","items":false}},"required":["a"]}`,
		`{"type":"number","minimum":0.333333,"maximum":0.333334}`,
		`{"enum":[{"b":[1,2]},"x",3.5,true]}`,
		`{"oneOf":[{"type":"object","properties":{"t":{"const":1}},"required":["t"]},{"type":"object","properties":{"t":{"const":2}},"required":["t"]}]}`,
		`{"type":"object","additionalProperties":{"type":"integer","minimum":7,"maximum":7}}`,
		`{"type":"array","minItems":3,"items":{"type":"string","minLength":2}}`,
		`{"type":"object","additionalProperties":false}`,
	} {
		f.Add([]byte(s), uint64(2))
	}
	v := testVocab()
	f.Fuzz(func(t *testing.T, schema []byte, seed uint64) {
		g, err := Compile(schema, v)
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 3))
		budget := 200
		s := g.Start()
		var out []byte
		for i := 0; i < budget && !s.Final(); i++ {
			allowed := s.Allowed(budget - i)
			if s.Complete() && (len(allowed) == 0 || rng.IntN(4) == 0) {
				break
			}
			if len(allowed) == 0 {
				t.Fatalf("dead end after %q for %s", out, schema)
			}
			tok := allowed[rng.IntN(len(allowed))]
			if err := s.Advance(tok); err != nil {
				t.Fatal(err)
			}
			out = append(out, v.text[tok]...)
		}
		if !s.Complete() {
			// A budget too small for the schema's shortest document is
			// not a failure; anything else is.
			if g.root.size() <= budget/4 {
				t.Fatalf("not finished in %d tokens: %q for %s", budget, out, schema)
			}
			return
		}
		if !json.Valid(out) || !g.Accepts(out) {
			t.Fatalf("wrote %q for %s", out, schema)
		}
	})
}

// FuzzPattern: any pattern either compiles or is refused with an error;
// never a panic or a hang.
func FuzzPattern(f *testing.F) {
	for _, p := range []string{`^\d{3}-[a-z]+$`, `(a|b)*c{2,}`, `[^\s]?x.`, `a{1000}`, `((((a))))|b`, `[\w-]+@[\w.]+`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		d, err := compilePattern(p)
		if err != nil {
			return
		}
		if d.dist[0] < 0 {
			t.Fatalf("%q compiled to a dead start", p)
		}
	})
}
