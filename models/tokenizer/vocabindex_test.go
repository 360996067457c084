package tokenizer

import (
	"fmt"
	"math/rand"
	"testing"
)

// vocabIndex agrees with a Go map through growth, replaced ids (duplicate
// JSON keys), empty and binary keys, and lookups by string and by bytes.
func TestVocabIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	want := map[string]int{}
	v := newVocabIndex(4) // small: grows many times
	key := func() string {
		b := make([]byte, rng.Intn(6))
		for i := range b {
			b[i] = "ab\x00\xffé"[rng.Intn(6)]
		}
		return string(b)
	}
	for i := 0; i < 20000; i++ {
		k := key()
		if i%3 == 0 {
			k = fmt.Sprintf("tok%d", i)
		}
		v.set(k, i)
		want[k] = i
	}
	if v.len() != len(want) {
		t.Fatalf("len %d, want %d", v.len(), len(want))
	}
	n := 0
	v.each(func(tok string, id int) {
		n++
		if want[tok] != id {
			t.Fatalf("each: %q -> %d, want %d", tok, id, want[tok])
		}
	})
	if n != len(want) {
		t.Fatalf("each visited %d, want %d", n, len(want))
	}
	for i := 0; i < 20000; i++ {
		k := key()
		if i%2 == 0 {
			k = fmt.Sprintf("tok%d", i)
		}
		w, wok := want[k]
		g, ok := v.get(k)
		gb, okb := v.getBytes([]byte(k))
		if ok != wok || okb != wok || (wok && (g != w || gb != w)) {
			t.Fatalf("%q: get %d,%v getBytes %d,%v, want %d,%v", k, g, ok, gb, okb, w, wok)
		}
	}
}
