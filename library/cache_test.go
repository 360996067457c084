package library

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/library/store"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/profile"
)

func TestMain(m *testing.M) {
	profile.Register(profile.Family{Name: "llama", Architectures: []string{"LlamaForCausalLM"}, ModelTypes: []string{"llama"}, Kind: profile.KindChat})
	profile.Register(profile.Family{Name: "whisper", ModelTypes: []string{"whisper"}, Kind: profile.KindSpeech})
	// a mixture of experts whose tokens skip 100 parameters
	profile.Register(profile.Family{Name: "moe", ModelTypes: []string{"moe"}, Kind: profile.KindChat, Inactive: func(*profile.Config) int64 { return 100 }})
	if db := os.Getenv("HARK_SCAN_CHILD_DB"); db != "" {
		scanChild(db, os.Getenv("HARK_SCAN_CHILD_ROOT")) // scancrash_test.go; killed, never returns
	}
	code := m.Run()
	removeBenchCaches()
	os.Exit(code)
}

// gitBlobSHA1 is the git object id of content: the etag the Hub gives
// files not stored in LFS.
func gitBlobSHA1(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// blobName names a file's blob as the Hub does: sha256 for LFS files
// (weights), git sha1 otherwise.
func blobName(name string, b []byte) string {
	if strings.HasSuffix(name, ".safetensors") || strings.HasSuffix(name, ".bin") {
		return sha256Hex(b)
	}
	return gitBlobSHA1(b)
}

// writeSnapshot writes files into root/models--org--name the way
// huggingface_hub lays them out, and points refs at the commit.
func writeSnapshot(t testing.TB, root, repo, commit string, files map[string][]byte, refs ...string) string {
	t.Helper()
	repoDir := filepath.Join(root, RepoFolder(repo))
	snap := filepath.Join(repoDir, "snapshots", commit)
	must(t, os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755))
	for name, b := range files {
		blob := blobName(name, b)
		must(t, os.WriteFile(filepath.Join(repoDir, "blobs", blob), b, 0o644))
		link := filepath.Join(snap, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(link), 0o755))
		rel, err := filepath.Rel(filepath.Dir(link), filepath.Join(repoDir, "blobs", blob))
		must(t, err)
		os.Remove(link)
		must(t, os.Symlink(rel, link))
	}
	for _, r := range refs {
		p := filepath.Join(repoDir, "refs", filepath.FromSlash(r))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(commit), 0o644))
	}
	return snap
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// realFiles loads a real snapshot from the shared assets.
func realFiles(t testing.TB, rel ...string) map[string][]byte {
	dir := mlxtest.Assets(t, rel...)
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".safetensors")) && e.Name() != "expected.json" {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			must(t, err)
			out[e.Name()] = b
		}
	}
	return out
}

// safetensorsBytes builds a tiny safetensors file with the given tensors
// (zero-filled data).
func safetensorsBytes(tensors map[string][]int64, dtype string) []byte {
	hdr := map[string]any{}
	off := int64(0)
	for name, shape := range tensors {
		n := int64(safetensors.DType(dtype).Size())
		for _, d := range shape {
			n *= d
		}
		hdr[name] = map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	js, _ := json.Marshal(hdr)
	out := make([]byte, 8, 8+len(js)+int(off))
	binary.LittleEndian.PutUint64(out, uint64(len(js)))
	out = append(out, js...)
	return append(out, make([]byte, off)...)
}

const commitA = "0123456789abcdef0123456789abcdef01234567"
const commitB = "89abcdef0123456789abcdef0123456789abcdef"

func testLib(t testing.TB, roots ...string) *Library {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	must(t, err)
	t.Cleanup(func() { db.Close() })
	var rs []Root
	for _, r := range roots {
		rs = append(rs, Root{Path: r, Origin: "test"})
	}
	l := New(Options{DB: db, Roots: rs})
	t.Cleanup(func() { l.Close() })
	return l
}

func scanAll(t testing.TB, l *Library) []Model {
	t.Helper()
	if _, err := l.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms, err := l.List(context.Background())
	must(t, err)
	return ms
}

func byRepo(ms []Model, repo string) []Model {
	var out []Model
	for _, m := range ms {
		if m.Repo == repo {
			out = append(out, m)
		}
	}
	return out
}
