package cli

import (
	"slices"
	"testing"
)

// Flags may follow arguments; a flag's value stays with it, and "--"
// keeps what follows as arguments even when it looks like a flag.
func TestParseInterspersed(t *testing.T) {
	env := &Env{}
	fs := NewFlagSet(env, "t")
	n := fs.Int("n", 0, "")
	b := fs.Bool("b", false, "")
	s := fs.String("s", "", "")
	if err := Parse(fs, []string{"one", "-n", "3", "two", "--b", "--s=x", "--", "-n", "4"}); err != nil {
		t.Fatal(err)
	}
	if *n != 3 || !*b || *s != "x" || !slices.Equal(fs.Args(), []string{"one", "two", "-n", "4"}) {
		t.Fatalf("n=%d b=%v s=%q args=%q", *n, *b, *s, fs.Args())
	}
	fs = NewFlagSet(env, "t")
	fs.Int("n", 0, "")
	if err := Parse(fs, []string{"x", "-n", "nope"}); err == nil {
		t.Fatal("a bad value was accepted")
	}
}
