package library

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Generated caches are shared by every run of a benchmark (the testing
// package calls a benchmark several times) and removed by TestMain.
var (
	benchMu    sync.Mutex
	benchRoots = map[string]string{}
)

func removeBenchCaches() {
	for _, r := range benchRoots {
		os.RemoveAll(r)
	}
}

// benchCache generates a cache of repos×perRepo snapshots, each with a
// config, a tokenizer and a real safetensors header, shared blobs between
// a repo's snapshots as in real caches.
func benchCache(b *testing.B, repos, perRepo int) string {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprint(repos, "x", perRepo)
	if root, ok := benchRoots[key]; ok {
		return root
	}
	root, err := os.MkdirTemp("", "hark-bench-cache-")
	must(b, err)
	benchRoots[key] = root
	start := time.Now()
	defer func() { b.Logf("generated %d snapshots in %v", repos*perRepo, time.Since(start)) }()
	st := safetensorsBytes(map[string][]int64{"model.embed_tokens.weight": {512, 64}, "model.norm.weight": {64}, "lm_head.weight": {512, 64}}, "BF16")
	tok := []byte(`{"version":"1.0","model":{"type":"BPE"}}`)
	for r := 0; r < repos; r++ {
		for s := 0; s < perRepo; s++ {
			commit := fmt.Sprintf("%040x", r*perRepo+s+1)
			cfg := []byte(fmt.Sprintf(`{"model_type":"llama","architectures":["LlamaForCausalLM"],"max_position_embeddings":%d,"torch_dtype":"bfloat16"}`, 2048+s))
			refs := []string{}
			if s == perRepo-1 {
				refs = append(refs, "main")
			}
			writeSnapshot(b, root, fmt.Sprintf("org%d/model-%d", r%17, r), commit, map[string][]byte{"config.json": cfg, "tokenizer.json": tok, "model.safetensors": st}, refs...)
		}
	}
	return root
}

// BenchmarkFullScan1000 is a full scan of 1,000 snapshots (250 repos × 4)
// into a fresh index and then over an existing one.
func BenchmarkFullScan1000(b *testing.B) {
	root := benchCache(b, 250, 4)
	l := testLib(b, root)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := l.Scan(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if r.Models != 1000 {
			b.Fatalf("scanned %d models", r.Models)
		}
	}
}

// BenchmarkIncrementalUpdate is the work one debounced event costs: a ref
// moves in one repo of a 1,000-snapshot index, and that repo is rescanned
// and its rows replaced.
func BenchmarkIncrementalUpdate(b *testing.B) {
	root := benchCache(b, 250, 4)
	l := testLib(b, root)
	if _, err := l.Scan(context.Background()); err != nil {
		b.Fatal(err)
	}
	repoDir := filepath.Join(root, RepoFolder("org5/model-5"))
	ref := filepath.Join(repoDir, "refs", "main")
	commits := []string{fmt.Sprintf("%040x", 5*4+1), fmt.Sprintf("%040x", 5*4+4)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(ref, []byte(commits[i%2]), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := l.RescanUnit(context.Background(), root, repoDir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	m, err := l.Get(context.Background(), "org5/model-5")
	if err != nil || m.Commit != commits[(b.N-1)%2] {
		b.Fatalf("index did not follow the ref: %v %v", m.Commit, err)
	}
}
