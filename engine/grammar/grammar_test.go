package grammar

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// testVocab has every single byte plus multi-byte pieces typical of JSON
// and prose, so walks mix short and long tokens as real vocabularies do.
func testVocab() *Vocab {
	var toks [][]byte
	for b := 0; b < 256; b++ {
		toks = append(toks, []byte{byte(b)})
	}
	for _, s := range []string{`{"`, `":`, `",`, `"}`, `":"`, `","`, `"]`, `["`, `},`, `}]`, `{}`, `[]`,
		`true`, `false`, `null`, `name`, `"name"`, `age`, ` the`, `ing`, `10`, `0.5`, `-1`, `\n`, `\"`,
		"  ", "\n  ", "é", "日本", `"a`, `":[`, `],"`, `"kind":"`, `circle`, `square`, `tags`, `\u00e9`} {
		toks = append(toks, []byte(s))
	}
	toks = append(toks, nil) // a special token: no text
	return NewVocabBytes(toks)
}

// walk writes one document by choosing uniformly among allowed tokens,
// as a model with random weights would, within budget tokens.
func walk(t testing.TB, g *Grammar, rng *rand.Rand, budget int) []byte {
	t.Helper()
	s := g.Start()
	var out []byte
	for i := 0; i < budget; i++ {
		if s.Final() {
			return out
		}
		allowed := s.Allowed(budget - i)
		if s.Complete() && (len(allowed) == 0 || rng.IntN(8) == 0) {
			return out
		}
		if len(allowed) == 0 {
			t.Fatalf("dead end after %q", out)
		}
		tok := allowed[rng.IntN(len(allowed))]
		if err := s.Advance(tok); err != nil {
			t.Fatalf("advance after %q: %v", out, err)
		}
		out = append(out, g.vocab.text[tok]...)
	}
	if !s.Complete() {
		t.Fatalf("budget of %d tokens ran out in %q", budget, out)
	}
	return out
}

var walkSchemas = []string{
	`{"type":"object"}`,
	`true`,
	`{"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0,"maximum":150}},"required":["name","age"],"additionalProperties":false}`,
	`{"type":"array","items":{"enum":["a","b",1,12,null]},"minItems":2,"maxItems":4}`,
	`{"anyOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number","minimum":0.5,"maximum":2.25}},"required":["kind","r"]},{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"integer","minimum":-20,"maximum":-3}},"required":["kind","side"]}]}`,
	`{"oneOf":[{"type":"string","pattern":"^[a-z]{2,4}-\\d{3}$"},{"type":"integer","minimum":100,"maximum":100}]}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":3}},"ok":{"type":"boolean"},"n":{"type":["number","null"],"minimum":1e3}},"required":["tags","ok","n"]}`,
	`{"type":"string","pattern":"ab+c"}`,
	`{"type":"number","minimum":-0.001,"maximum":0.001}`,
}

func TestWalksWriteValidDocuments(t *testing.T) {
	v := testVocab()
	for _, src := range walkSchemas {
		g, err := Compile([]byte(src), v)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		for seed := uint64(0); seed < 60; seed++ {
			rng := rand.New(rand.NewPCG(seed, 7))
			budget := 30 + int(seed)*3
			doc := walk(t, g, rng, budget)
			if !json.Valid(doc) {
				t.Fatalf("%s seed %d: not JSON: %q", src, seed, doc)
			}
			if !g.Accepts(doc) {
				t.Fatalf("%s seed %d: grammar rejects its own output %q", src, seed, doc)
			}
		}
	}
}

func TestAccepts(t *testing.T) {
	v := testVocab()
	cases := []struct {
		schema string
		yes    []string
		no     []string
	}{
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":2,"maximum":30}},"required":["a"],"additionalProperties":false}`,
			[]string{`{"a":2}`, `{ "a" : 30 }`, "{\n  \"a\": 17\n}"},
			[]string{`{}`, `{"a":1}`, `{"a":31}`, `{"a":2.5}`, `{"a":2,"a":3}`, `{"b":2}`, `{"a":02}`, `{"a":2}x`, ` {"a":2}`}},
		{`{"type":"string","minLength":2,"maxLength":3}`,
			[]string{`"ab"`, `"日本"`, `"a\n"`, `"abc"`},
			[]string{`"a"`, `"abcd"`, `"a` + "\n" + `"`, `"\x"`, "\"\xff\xfe\""}},
		{`{"enum":[1,12,"x"]}`, []string{`1`, `12`, `"x"`}, []string{`2`, `123`, `"y"`}},
		{`{"type":"string","pattern":"^\\d{3}(-[A-F]+)?$"}`, []string{`"123"`, `"007-ABF"`}, []string{`"12"`, `"123-"`, `"123-a"`}},
		{`{"type":"string","pattern":"cat"}`, []string{`"cat"`, `"a cat!"`}, []string{`"ca"`, `"dog"`}},
		{`{"type":"number","minimum":-1.5,"maximum":2}`, []string{`-1.5`, `0`, `2`, `1.999`, `-0.25`}, []string{`-1.51`, `2.001`, `-0`, `1e1`, `+1`}},
		{`{"type":"array","items":{"type":"boolean"},"maxItems":2}`, []string{`[]`, `[true]`, `[ true , false ]`}, []string{`[true,true,true]`, `[1]`, `[,]`}},
		{`{"type":"object"}`, []string{`{}`, `{"a":[1,{"b":null}],"c":"d"}`}, []string{`[]`, `{"a"}`, `{"a":}`}},
	}
	for _, c := range cases {
		g, err := Compile([]byte(c.schema), v)
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		for _, y := range c.yes {
			if !g.Accepts([]byte(y)) {
				t.Errorf("%s: rejects %q", c.schema, y)
			}
		}
		for _, n := range c.no {
			if g.Accepts([]byte(n)) {
				t.Errorf("%s: accepts %q", c.schema, n)
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	v := testVocab()
	cases := map[string]string{
		`{"type":"string","format":"date"}`:              "unsupported keyword format",
		`{"$ref":"#/x"}`:                                 "unsupported keyword $ref",
		`{"type":"integer","minimum":1.2,"maximum":1.8}`: "no number",
		`{"type":"string","minLength":5,"maxLength":2}`:  "minLength 5 is over maxLength 2",
		`{"enum":[]}`: "no JSON value",
		`{"type":"object","properties":{"a":false},"required":["a"]}`: "no JSON value",
		`{"oneOf":[{"type":"number"},{"type":"integer"}]}`:            "oneOf branches 0 and 1",
		`{"type":"string","pattern":"(?=a)"}`:                         "lookaround",
		`{"type":"string","pattern":"a\\1"}`:                          "backreferences",
		`{"type":"strin"}`:                                            `unknown type "strin"`,
		`[1]`:                                                         "a schema is an object or a boolean",
		`{"type":"string","pattern":"[b-a]"}`:                         "bad range",
	}
	for src, want := range cases {
		_, err := Compile([]byte(src), v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}
