package tokenizer

import (
	"reflect"
	"regexp"
	"testing"
)

func findAllStrings(re *regex, s string) []string {
	var out []string
	re.findAll(s, func(i, j int) { out = append(out, s[i:j]) })
	return out
}

func TestRegexOnigSemantics(t *testing.T) {
	llama3 := `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cases := []struct {
		pattern, in string
		want        []string
	}{
		// \s+(?!\S) leaves the last space to join the next word.
		{gpt2Pattern, "a   b", []string{"a", "  ", " b"}},
		{gpt2Pattern, "x \t\ny", []string{"x", " \t", "\n", "y"}},
		{gpt2Pattern, "trailing  ", []string{"trailing", "  "}},
		{gpt2Pattern, "I'M it's", []string{"I", "'", "M", " it", "'s"}},
		{llama3, "I'M 12345", []string{"I", "'M", " ", "123", "45"}},
		{llama3, "hi!!\n\n  x", []string{"hi", "!!\n\n", " ", " x"}},
		{llama3, "Ωμέγα ٣٤", []string{"Ωμέγα", " ", "٣٤"}},
		{`a+?b`, "aaab", []string{"aaab"}},
		{`(?:ab)+c`, "ababc abc", []string{"ababc", "abc"}},
		{`a++a`, "aaa", nil}, // possessive: never gives back
		{`\x41\u00e9`, "Aé", []string{"Aé"}},
		{`^a|b$`, "aab", []string{"a", "b"}},
		{`^a|b$`, "ab\nab", []string{"a", "b", "a", "b"}}, // line anchors, as in Ruby syntax
		{`\s+$`, "a \nb  ", []string{" ", "  "}},
	}
	for _, c := range cases {
		re, err := compileRegex(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := findAllStrings(re, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q on %q: got %q want %q", c.pattern, c.in, got, c.want)
		}
	}
}

// TestRegexAgreesWithRE2 cross-checks lookahead-free patterns against Go's
// regexp, whose leftmost-first semantics are the same for these. (\d and
// \w are left out: RE2 makes them ASCII-only, Oniguruma Unicode-aware.)
func TestRegexAgreesWithRE2(t *testing.T) {
	patterns := []string{`\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+`, `(?i:ab|c)d*`, `[a-c0-9]{2,3}`, `[^\p{Lu}\s]+|.`}
	inputs := []string{"Hello, wörld 42!", "ABdd abD cD 123abc", "日本語 テキスト١٢٣", "tab\tnew\nline"}
	for _, p := range patterns {
		mine := mustRegex(p)
		std := regexp.MustCompile(p)
		for _, in := range inputs {
			got := findAllStrings(mine, in)
			want := std.FindAllString(in, -1)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q on %q: got %q, regexp %q", p, in, got, want)
			}
		}
	}
}

func TestRegexRejectsUnsupported(t *testing.T) {
	for _, p := range []string{`(?<=a)b`, `(?>a)`, `\k<x>`, `(a`, `a)`, `[a`, `\p{Nope}`, `*a`} {
		if _, err := compileRegex(p); err == nil {
			t.Errorf("%q compiled, want an error", p)
		}
	}
}

func TestLossyUTF8(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ok", "ok"},
		{"a\xe2\x82", "a\uFFFD"},               // truncated 3-byte: one replacement
		{"\xe2\x82a", "\uFFFDa"},               // truncated then ASCII
		{"\xff\xfe", "\uFFFD\uFFFD"},           // each invalid byte separately
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // surrogate: ED may not be followed by A0
		{"\xf0\x9f\x98", "\uFFFD"},
	} {
		if got := lossyUTF8([]byte(c.in)); got != c.want {
			t.Errorf("lossyUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRegexOtherModelPatterns runs split patterns of other model families
// that the engine (not the scanner) must handle.
func TestRegexOtherModelPatterns(t *testing.T) {
	cases := []struct {
		name, pattern, in string
		want              []string
	}{
		{"o200k (Phi-4, GPT-4o)",
			`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
			"HelloWorld's NASA 2024//\n", []string{"Hello", "World's", " NASA", " ", "202", "4", "//\n"}},
		{"DeepSeek trailing space", `\s+$`, "a b  ", []string{"  "}},
		{"CJK range", `[一-龥ࠀ-一가-퟿]+`, "abc中文def한국", []string{"中文", "한국"}},
	}
	for _, c := range cases {
		re, err := compileRegex(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := findAllStrings(re, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s on %q: got %q want %q", c.name, c.in, got, c.want)
		}
	}
}
