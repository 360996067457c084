package library

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hark/models/profile"
)

func TestScanRealSnapshots(t *testing.T) {
	root := t.TempDir()
	q := realFiles(t, "models", "stories260K-4bit-g32")
	writeSnapshot(t, root, "mlx-community/stories260K-4bit", commitA, q, "main")
	hf := realFiles(t, "models", "stories260K", "hf")
	writeSnapshot(t, root, "karpathy/stories260K", commitB, hf, "main", "refs/pr/1")
	w := realFiles(t, "whisper", "golden", "model")
	writeSnapshot(t, root, "openai/whisper-tiny-golden", commitA, w, "main")
	// Datasets share the cache and are ignored.
	writeSnapshot(t, root, "x/y", commitA, map[string][]byte{"data.csv": []byte("a,b")})
	os.Rename(filepath.Join(root, RepoFolder("x/y")), filepath.Join(root, "datasets--x--y"))

	l := testLib(t, root)
	ms := scanAll(t, l)
	if len(ms) != 3 {
		t.Fatalf("got %d models: %+v", len(ms), ms)
	}
	m, err := l.Get(context.Background(), "hf:mlx-community/stories260K-4bit@"+commitA)
	must(t, err)
	if m.Kind != profile.KindChat || !m.Supported || m.Family != "llama" || m.Quant == nil || m.Quant.Bits != 4 || m.Quant.GroupSize != 32 || m.ContextLength != 512 || m.DType != "float32" {
		t.Fatalf("quantized model: %+v quant %+v", m, m.Quant)
	}
	if !reflect.DeepEqual(m.Refs, []string{"main"}) || len(m.Files) != len(q) || len(m.Problems) != 0 {
		t.Fatalf("refs %v files %v problems %v", m.Refs, m.Files, m.Problems)
	}
	var size int64
	for _, b := range q {
		size += int64(len(b))
	}
	if m.Size != size {
		t.Errorf("size %d, want %d", m.Size, size)
	}
	full, err := l.Get(context.Background(), "karpathy/stories260K")
	must(t, err)
	// The quantized model stands for the same weights, so it must count
	// the same parameters as the float one: 260K-ish, from the headers.
	if full.Params < 200_000 || full.Params > 300_000 || full.Params != m.Params {
		t.Errorf("params: float %d, quantized %d", full.Params, m.Params)
	}
	if !reflect.DeepEqual(full.Refs, []string{"main", "refs/pr/1"}) {
		t.Errorf("refs %v", full.Refs)
	}
	wm, err := l.Get(context.Background(), "openai/whisper-tiny-golden")
	must(t, err)
	if wm.Kind != profile.KindSpeech || !wm.Supported || wm.ContextLength != 448 || wm.Params == 0 {
		t.Errorf("whisper: %+v", wm)
	}
	if !strings.HasPrefix(wm.ID, "hf:openai/whisper-tiny-golden@") || wm.ConfigHash == "" || len(wm.ConfigHash) != 16 {
		t.Errorf("ids: %q %q", wm.ID, wm.ConfigHash)
	}
}

func TestSizeCountsSharedBlobsOnce(t *testing.T) {
	root := t.TempDir()
	big := safetensorsBytes(map[string][]int64{"w": {100, 10}}, "F32")
	cfg := []byte(`{"model_type":"llama"}`)
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": cfg, "model.safetensors": big, "copy/model.safetensors": big}, "main")
	writeSnapshot(t, root, "o/r", commitB, map[string][]byte{"config.json": cfg, "model.safetensors": big})
	l := testLib(t, root)
	ms := scanAll(t, l)
	if len(ms) != 2 {
		t.Fatalf("%d models", len(ms))
	}
	for _, m := range ms {
		if m.Size != int64(len(big)+len(cfg)) {
			t.Errorf("%s: size %d, want %d", m.Commit, m.Size, len(big)+len(cfg))
		}
	}
	a, _ := l.Get(context.Background(), "o/r")
	if a.Commit != commitA || a.Params != 2000 {
		t.Errorf("o/r resolves to %s with %d params", a.Commit, a.Params)
	}
	b, err := l.Get(context.Background(), "o/r@"+commitB[:8])
	if err != nil || b.Commit != commitB {
		t.Errorf("commit prefix: %v %v", b.Commit, err)
	}
}

func TestDirRoots(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"mamba","architectures":["MambaForCausalLM"]}`)
	lm := filepath.Join(root, "lmstudio-community", "Some-Model")
	must(t, os.MkdirAll(lm, 0o755))
	must(t, os.WriteFile(filepath.Join(lm, "config.json"), cfg, 0o644))
	must(t, os.WriteFile(filepath.Join(lm, "model.safetensors"), safetensorsBytes(map[string][]int64{"a": {3, 4}}, "BF16"), 0o644))
	plain := filepath.Join(root, "whisper-local")
	must(t, os.MkdirAll(plain, 0o755))
	must(t, os.WriteFile(filepath.Join(plain, "config.json"), []byte(`{"model_type":"whisper","max_target_positions":448}`), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "not-a-model", "deeper"), 0o755))
	gguf := filepath.Join(root, "lmstudio-community", "Qwen-GGUF")
	must(t, os.MkdirAll(gguf, 0o755))
	must(t, os.WriteFile(filepath.Join(gguf, "qwen-Q4_K_M.gguf"), []byte("GGUF"), 0o644))
	l := testLib(t, root)
	ms := scanAll(t, l)
	if len(ms) != 3 {
		t.Fatalf("got %+v", ms)
	}
	if g, err := l.Get(context.Background(), gguf); err != nil || g.Supported || !strings.Contains(g.Reason, "GGUF") || len(g.Problems) != 0 || g.Size != 4 {
		t.Fatalf("gguf dir: %+v %v", g, err)
	}
	m, err := l.Get(context.Background(), lm)
	must(t, err)
	if m.Source != "dir" || m.Fingerprint != "" || m.Repo != "lmstudio-community/Some-Model" || m.Supported || !strings.Contains(m.Reason, `model_type "mamba" is not supported (supported: llama, moe, whisper)`) || m.Kind != profile.KindChat || m.Params != 12 || m.DType != "bfloat16" || m.ContentID == "" {
		t.Fatalf("lm studio model: %+v", m)
	}
	if m2, err := l.Get(context.Background(), filepath.Join(lm, "model.safetensors")); err != nil || m2.Path != lm {
		t.Errorf("a file inside a model dir: %v %v", m2.Path, err)
	}
	if m2, err := l.Get(context.Background(), "lmstudio-community/Some-Model"); err != nil || m2.Path != lm {
		t.Errorf("org/repo of a dir: %v %v", m2.Path, err)
	}
	// Content ID follows content, not the path.
	id1 := m.ContentID
	must(t, os.WriteFile(filepath.Join(lm, "extra.txt"), []byte("x"), 0o644))
	scanAll(t, l)
	m, _ = l.Get(context.Background(), lm)
	if m.ContentID == id1 {
		t.Error("content id unchanged after adding a file")
	}
}

func TestBadInput(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"llama"}`)
	st := safetensorsBytes(map[string][]int64{"w": {2, 2}}, "F32")

	// Broken symlink, and a symlink loop.
	snap := writeSnapshot(t, root, "o/broken", commitA, map[string][]byte{"config.json": cfg, "model.safetensors": st}, "main")
	must(t, os.Symlink("../../blobs/"+strings.Repeat("a", 64), filepath.Join(snap, "gone.safetensors")))
	must(t, os.Symlink("loop2", filepath.Join(snap, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(snap, "loop2")))
	// Malformed and huge config.json.
	writeSnapshot(t, root, "o/malformed", commitA, map[string][]byte{"config.json": []byte(`{"model_type": "llama",`)}, "main")
	writeSnapshot(t, root, "o/huge", commitA, map[string][]byte{"config.json": []byte(`{"pad":"` + strings.Repeat("x", profile.MaxConfigBytes) + `"}`)}, "main")
	// Garbage refs file.
	writeSnapshot(t, root, "o/garbage-ref", commitA, map[string][]byte{"config.json": cfg})
	must(t, os.MkdirAll(filepath.Join(root, RepoFolder("o/garbage-ref"), "refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, RepoFolder("o/garbage-ref"), "refs", "main"), []byte("\x00\xffnot a hash"), 0o644))
	// Non-UTF-8 file name.
	snapN := writeSnapshot(t, root, "o/names", commitA, map[string][]byte{"config.json": cfg}, "main")
	must(t, os.WriteFile(filepath.Join(snapN, "bad\xffname.txt"), []byte("hi"), 0o644))
	// Missing shard named by the index.
	idx := []byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`)
	writeSnapshot(t, root, "o/sharded", commitA, map[string][]byte{"config.json": cfg, "model.safetensors.index.json": idx, "model-00001-of-00002.safetensors": st}, "main")
	// A bogus repo folder name.
	must(t, os.MkdirAll(filepath.Join(root, "models--bad name--x", "snapshots"), 0o755))

	l := testLib(t, root)
	ms := scanAll(t, l)
	get := func(id string) Model {
		m, err := l.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return m
	}
	problems := func(m Model) string { return strings.Join(m.Problems, " | ") }

	m := get("o/broken")
	if !m.Incomplete || m.Supported || !strings.Contains(problems(m), "gone.safetensors: dangling symlink") || !strings.Contains(problems(m), "loop1: symlink loop") {
		t.Errorf("broken: %q supported=%v", problems(m), m.Supported)
	}
	if m.Params != 4 {
		t.Errorf("broken: params %d from the good file", m.Params)
	}
	if m := get("o/malformed"); !strings.Contains(problems(m), "not valid JSON") || m.Supported || m.Kind != profile.KindOther {
		t.Errorf("malformed: %+v", m)
	}
	if m := get("o/huge"); !strings.Contains(problems(m), "over the") {
		t.Errorf("huge: %q", problems(m))
	}
	gr, err := l.ix.list(context.Background(), `repo = ?`, "o/garbage-ref")
	if err != nil || len(gr) != 1 || !strings.Contains(problems(gr[0]), "ref main: refs file does not hold a commit hash") || len(gr[0].Refs) != 0 {
		t.Errorf("garbage ref: %+v %v", gr, err)
	}
	if m := get("o/names"); len(m.Files) != 2 || !hasFile(m, `bad\xffname.txt`) {
		t.Errorf("non-UTF-8: %+v", m.Files)
	}
	if m := get("o/sharded"); !m.Incomplete || !strings.Contains(problems(m), "missing model-00002-of-00002.safetensors, named in model.safetensors.index.json") {
		t.Errorf("sharded: %q", problems(m))
	}
	var bogus bool
	for _, m := range ms {
		bogus = bogus || strings.Contains(problems(m), "models--bad name--x")
	}
	if !bogus {
		t.Error("bogus repo folder not reported")
	}
}

func hasFile(m Model, name string) bool {
	for _, f := range m.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Permission-denied folders must be a problem on that model only. Root
// ignores mode bits, so as root the test drives the same ReadDir failure
// path with folders that cannot be read for a reason root cannot bypass:
// a "snapshots" entry that is a file (ENOTDIR).
func TestPermissionDenied(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"llama"}`)
	snap := writeSnapshot(t, root, "o/locked", commitA, map[string][]byte{"config.json": cfg, "sub/tokenizer.json": []byte("{}")}, "main")
	writeSnapshot(t, root, "o/fine", commitA, map[string][]byte{"config.json": cfg}, "main")
	if os.Geteuid() == 0 {
		rd := filepath.Join(root, RepoFolder("o/nosnap"))
		must(t, os.MkdirAll(rd, 0o755))
		must(t, os.WriteFile(filepath.Join(rd, "snapshots"), []byte("not a dir"), 0o644))
		l := testLib(t, root)
		ms := scanAll(t, l)
		ns := byRepo(ms, "o/nosnap")
		if len(ns) != 1 || !strings.Contains(strings.Join(ns[0].Problems, ""), "cannot read snapshots") {
			t.Fatalf("unreadable snapshots: %+v", ns)
		}
		if len(byRepo(ms, "o/fine")) != 1 {
			t.Fatal("a sibling's problem hid a good repo")
		}
		t.Log("running as root: mode bits are ignored, tested the same unreadable-folder path with a non-folder instead")
		return
	}
	must(t, os.Chmod(filepath.Join(snap, "sub"), 0o000))
	t.Cleanup(func() { os.Chmod(filepath.Join(snap, "sub"), 0o755) })
	l := testLib(t, root)
	ms := scanAll(t, l)
	m := byRepo(ms, "o/locked")
	if len(m) != 1 || !strings.Contains(strings.Join(m[0].Problems, ""), "cannot read folder sub: permission denied") {
		t.Fatalf("locked: %+v", m)
	}
	if len(byRepo(ms, "o/fine")) != 1 {
		t.Fatal("a sibling's problem hid a good repo")
	}
}

func TestTwoRootsSameRepo(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	files := map[string][]byte{"config.json": []byte(`{"model_type":"llama"}`)}
	writeSnapshot(t, a, "o/r", commitA, files, "main")
	writeSnapshot(t, b, "o/r", commitA, files, "main")
	l := testLib(t, a, b)
	ms := scanAll(t, l)
	if len(ms) != 2 || ms[0].Fingerprint != ms[1].Fingerprint || ms[0].Path == ms[1].Path {
		t.Fatalf("%+v", ms)
	}
	m, err := l.Get(context.Background(), "hf:o/r@"+strings.ToUpper(commitA))
	if err != nil || m.Root != a {
		t.Fatalf("first root should win: %v %v", m.Root, err)
	}
	// Dropping a root drops its rows.
	must(t, l.SetRoots(context.Background(), []Root{{Path: b}}))
	ms, _ = l.List(context.Background())
	if len(ms) != 1 || ms[0].Root != b {
		t.Fatalf("after SetRoots: %+v", ms)
	}
}

func TestSnapshotDeletedDuringScan(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"llama"}`)
	for i := 0; i < 40; i++ {
		writeSnapshot(t, root, "o/r"+string(rune('a'+i%26))+string(rune('a'+i/26)), commitA, map[string][]byte{"config.json": cfg, "a/b/c.json": cfg}, "main")
	}
	l := testLib(t, root)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 40; i++ {
			os.RemoveAll(filepath.Join(root, RepoFolder("o/r"+string(rune('a'+i%26))+string(rune('a'+i/26))), "snapshots", commitA))
		}
	}()
	if _, err := l.Scan(context.Background()); err != nil {
		t.Fatalf("scan racing deletes: %v", err)
	}
	<-done
	// Whatever the race left, a rescan must agree with the disk.
	ms := scanAll(t, l)
	if len(ms) != 0 {
		t.Fatalf("deleted snapshots still indexed: %d", len(ms))
	}
	var n int
	l.opts.DB.QueryRow(`SELECT count(*) FROM library_files`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d orphan file rows", n)
	}
}

// A mixture-of-experts model has its active parameters counted, stored
// and read back; a dense one has none.
func TestActiveParams(t *testing.T) {
	root := t.TempDir()
	for name, mt := range map[string]string{"sparse": "moe", "dense": "llama"} {
		dir := filepath.Join(root, name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type":"`+mt+`"}`), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), safetensorsBytes(map[string][]int64{"a": {30, 40}}, "F32"), 0o644))
	}
	l := testLib(t, root)
	scanAll(t, l)
	for name, want := range map[string]int64{"sparse": 1200 - 100, "dense": 0} {
		m, err := l.Get(context.Background(), filepath.Join(root, name))
		must(t, err)
		if !m.Supported || m.Params != 1200 || m.ActiveParams != want {
			t.Errorf("%s: supported %v (%s), params %d, active %d, want active %d", name, m.Supported, m.Reason, m.Params, m.ActiveParams, want)
		}
	}
}
