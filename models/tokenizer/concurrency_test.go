package tokenizer

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"hark/mlx/mlxtest"
)

// TestConcurrentEncode shares one tokenizer (and its word cache) between
// goroutines, as the app does across chats; run with -race to be thorough.
func TestConcurrentEncode(t *testing.T) {
	tk := loadAsset(t, "tokenizers", "qwen3")
	var texts []string
	var want [][]int
	readJSONL(t, filepath.Join(mlxtest.Assets(t, "tokenizers", "qwen3"), "golden.jsonl"), func(_ int, raw []byte) {
		var g goldenLine
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, g.Text)
		want = append(want, nonNil(g.IDs))
	})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := range texts {
				k := (i + w*37) % len(texts)
				if got := nonNil(tk.Encode(texts[k], false)); !reflect.DeepEqual(got, want[k]) {
					t.Errorf("worker %d, %q: got %v", w, texts[k], got)
					return
				}
			}
		}(w)
	}
	wg.Wait()
}
