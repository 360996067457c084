package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"hark/mlx/mlxtest"
)

// Loaded tokenizers are shared between tests: the big vocabularies take a
// noticeable time to parse.
var (
	loadMu sync.Mutex
	loaded = map[string]*Tokenizer{}
)

func loadAsset(t testing.TB, rel ...string) *Tokenizer {
	t.Helper()
	dir := mlxtest.Assets(t, rel...)
	loadMu.Lock()
	defer loadMu.Unlock()
	if tk, ok := loaded[dir]; ok {
		return tk
	}
	tk, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded[dir] = tk
	return tk
}

func readJSONL(t testing.TB, path string, fn func(line int, raw []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		fn(n, sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

type goldenLine struct {
	Text           string  `json:"text"`
	IDs            []int   `json:"ids"`
	IDsSpecial     []int   `json:"ids_special"`
	Decoded        string  `json:"decoded"`
	DecodedSpecial string  `json:"decoded_special"`
	DecodedCleanup *string `json:"decoded_cleanup"`
}

func TestGoldenHF(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			tk := loadAsset(t, "tokenizers", name)
			total, pass := 0, 0
			readJSONL(t, filepath.Join(mlxtest.Assets(t, "tokenizers", name), "golden.jsonl"), func(n int, raw []byte) {
				var g goldenLine
				if err := json.Unmarshal(raw, &g); err != nil {
					t.Fatalf("line %d: %v", n, err)
				}
				total++
				ok := true
				check := func(what string, got, want any) {
					if !reflect.DeepEqual(got, want) {
						ok = false
						t.Errorf("line %d %q: %s\n got %v\nwant %v", n, g.Text, what, got, want)
					}
				}
				check("ids", nonNil(tk.Encode(g.Text, false)), nonNil(g.IDs))
				check("ids_special", nonNil(tk.Encode(g.Text, true)), nonNil(g.IDsSpecial))
				check("decoded", tk.Decode(g.IDs, false), g.Decoded)
				check("decoded_special", tk.Decode(g.IDsSpecial, false), g.DecodedSpecial)
				if g.DecodedCleanup != nil {
					check("decoded_cleanup", CleanUpTokenization(tk.Decode(g.IDs, false)), *g.DecodedCleanup)
				}
				if ok {
					pass++
				}
			})
			t.Logf("%s golden: %d/%d lines pass", name, pass, total)
		})
	}
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// readVectors parses llama.cpp's .inp/.out pair.
func readVectors(t *testing.T, base string) ([]string, [][]int) {
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	// The file ends with the separator, leaving one empty tail.
	if len(texts) > 0 && texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs but %d outputs", base, len(texts), len(lines))
	}
	ids := make([][]int, len(lines))
	for i, l := range lines {
		ids[i] = []int{}
		for _, f := range strings.Fields(l) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			ids[i] = append(ids[i], v)
		}
	}
	return texts, ids
}

func TestLlamaCppVectors(t *testing.T) {
	dir := mlxtest.Assets(t, "tokenizer-vectors")
	cases := []struct {
		name string
		load func(t *testing.T) *Tokenizer
	}{
		{"qwen2", func(t *testing.T) *Tokenizer { return loadAsset(t, "tokenizers", "qwen3") }},
		{"llama-bpe", func(t *testing.T) *Tokenizer { return loadAsset(t, "tokenizers", "llama3") }},
		{"gpt-2", func(t *testing.T) *Tokenizer {
			tk, err := LoadTiktoken(mlxtest.Assets(t, "whisper", "gpt2.tiktoken"), []string{"<|endoftext|>"})
			if err != nil {
				t.Fatal(err)
			}
			return tk
		}},
		{"llama-spm", llama2Tokenizer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := c.load(t)
			texts, want := readVectors(t, filepath.Join(dir, "ggml-vocab-"+c.name+".gguf"))
			pass := 0
			for i, s := range texts {
				got := nonNil(tk.Encode(s, false))
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, s, got, want[i])
					continue
				}
				pass++
			}
			t.Logf("%s vectors: %d/%d pass", c.name, pass, len(texts))
		})
	}
}

func TestStories260K(t *testing.T) {
	tk := loadAsset(t, "models", "stories260K", "hf")
	if tk.BOS() != 1 || tk.EOS() != 2 {
		t.Errorf("BOS/EOS = %d/%d, want 1/2", tk.BOS(), tk.EOS())
	}
	path := mlxtest.Assets(t, "models", "stories260K", "llama2c_encode_cases.jsonl")
	total, pass := 0, 0
	readJSONL(t, path, func(n int, raw []byte) {
		var c struct {
			Text   string `json:"text"`
			IDs    []int  `json:"ids"`
			IDsBOS []int  `json:"ids_bos"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		total++
		got, gotBOS := nonNil(tk.Encode(c.Text, false)), nonNil(tk.Encode(c.Text, true))
		if !reflect.DeepEqual(got, nonNil(c.IDs)) || !reflect.DeepEqual(gotBOS, nonNil(c.IDsBOS)) {
			t.Errorf("line %d %q:\n got %v / %v\nwant %v / %v", n, c.Text, got, gotBOS, c.IDs, c.IDsBOS)
			return
		}
		pass++
	})
	t.Logf("stories260K: %d/%d pass", pass, total)
}

// whisperSpecials reads Whisper's special tokens, in id order, from the HF
// snapshot that ships beside the goldens.
func whisperSpecials(t testing.TB) []string {
	path := mlxtest.Assets(t, "whisper", "golden", "model", "tokenizer.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Added []AddedToken `json:"added_tokens"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(f.Added))
	for i, a := range f.Added {
		if a.ID != 50257+i {
			t.Fatalf("added token %q has id %d, want %d", a.Content, a.ID, 50257+i)
		}
		out[i] = a.Content
	}
	return out
}

func TestWhisperGolden(t *testing.T) {
	tk, err := LoadTiktoken(mlxtest.Assets(t, "whisper", "multilingual.tiktoken"), whisperSpecials(t))
	if err != nil {
		t.Fatal(err)
	}
	total, pass := 0, 0
	readJSONL(t, mlxtest.Assets(t, "whisper", "tokenizer-golden.jsonl"), func(n int, raw []byte) {
		var c struct {
			Text    string `json:"text"`
			IDs     []int  `json:"ids"`
			Decoded string `json:"decoded"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		total++
		got := nonNil(tk.Encode(c.Text, false))
		dec := tk.Decode(c.IDs, false)
		if !reflect.DeepEqual(got, nonNil(c.IDs)) || dec != c.Decoded {
			t.Errorf("line %d %q:\n got %v %q\nwant %v %q", n, c.Text, got, dec, c.IDs, c.Decoded)
			return
		}
		pass++
	})
	t.Logf("whisper multilingual: %d/%d pass", pass, total)
}

// TestWhisperJSONMatchesTiktoken loads the HF form of Whisper's tokenizer
// (WhisperTokenizerFast's tokenizer.json) and holds it to the same goldens
// as the tiktoken build.
func TestWhisperJSONMatchesTiktoken(t *testing.T) {
	tk := loadAsset(t, "whisper", "golden", "model")
	n := 0
	readJSONL(t, mlxtest.Assets(t, "whisper", "tokenizer-golden.jsonl"), func(line int, raw []byte) {
		var c struct {
			Text    string `json:"text"`
			IDs     []int  `json:"ids"`
			Decoded string `json:"decoded"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if got := nonNil(tk.Encode(c.Text, false)); !reflect.DeepEqual(got, nonNil(c.IDs)) {
			t.Errorf("line %d %q: got %v want %v", line, c.Text, got, c.IDs)
		}
		if got := tk.Decode(c.IDs, false); got != c.Decoded {
			t.Errorf("line %d: decoded %q want %q", line, got, c.Decoded)
		}
		n++
	})
	if n == 0 {
		t.Fatal("no golden lines")
	}
}
