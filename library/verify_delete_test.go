package library

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerify(t *testing.T) {
	root := t.TempDir()
	st := safetensorsBytes(map[string][]int64{"w": {64, 64}}, "F32")
	cfg := []byte(`{"model_type":"llama"}`)
	idx := []byte(`{"weight_map":{"w":"model.safetensors","v":"model-2.safetensors"}}`)
	snap := writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": cfg, "model.safetensors": st, "model.safetensors.index.json": idx}, "main")
	l := testLib(t, root)
	scanAll(t, l)
	var last, total int64
	res, err := l.Verify(context.Background(), "o/r", func(d, tot int64, _ string) { last, total = d, tot })
	must(t, err)
	if res.Checked != 3 || len(res.Mismatches) != 0 || last != total || total != int64(len(st)+len(cfg)+len(idx)) {
		t.Fatalf("clean verify: %+v (progress %d/%d)", res, last, total)
	}
	if res.OK || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "missing model-2.safetensors") {
		t.Fatalf("missing shard not reported: %+v", res)
	}
	// Corrupt the weights blob (one flipped byte) and the config blob;
	// add a dangling link.
	blob := filepath.Join(root, RepoFolder("o/r"), "blobs", sha256Hex(st))
	bad := append([]byte(nil), st...)
	bad[len(bad)-1] ^= 1
	must(t, os.WriteFile(blob, bad, 0o644))
	must(t, os.WriteFile(filepath.Join(root, RepoFolder("o/r"), "blobs", gitBlobSHA1(cfg)), []byte(`{"model_type":"llamb"}`), 0o644))
	must(t, os.Symlink("../../blobs/nothing", filepath.Join(snap, "tokenizer.json")))
	res, err = l.Verify(context.Background(), "o/r", nil)
	must(t, err)
	if res.OK || len(res.Mismatches) != 2 {
		t.Fatalf("corruption: %+v", res)
	}
	algos := res.Mismatches[0].Algo + res.Mismatches[1].Algo
	if !strings.Contains(algos, "sha256") || !strings.Contains(algos, "git-sha1") || !strings.Contains(strings.Join(res.Problems, "|"), "tokenizer.json: dangling symlink") {
		t.Fatalf("mismatch details: %+v", res)
	}
	// Cancel stops it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Verify(ctx, "o/r", nil); err == nil {
		t.Fatal("cancelled verify succeeded")
	}
}

func TestDeleteSnapshotKeepsSharedBlobs(t *testing.T) {
	root := t.TempDir()
	shared := safetensorsBytes(map[string][]int64{"w": {8}}, "F32")
	onlyA := []byte(`{"model_type":"llama","v":1}`)
	onlyB := []byte(`{"model_type":"llama","v":2}`)
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": onlyA, "model.safetensors": shared})
	writeSnapshot(t, root, "o/r", commitB, map[string][]byte{"config.json": onlyB, "model.safetensors": shared}, "main")
	// A snapshot link pointing outside the cache must never be followed
	// or deleted.
	outside := filepath.Join(t.TempDir(), "precious.bin")
	must(t, os.WriteFile(outside, []byte("keep me"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(root, RepoFolder("o/r"), "snapshots", commitA, "outside.bin")))
	l := testLib(t, root)
	scanAll(t, l)
	fp := "hf:o/r@" + commitA
	dry, err := l.Delete(context.Background(), fp, false, true)
	must(t, err)
	if dry.Freed != int64(len(onlyA)) || dry.Blobs != 1 || dry.Kept != 1 {
		t.Fatalf("dry run %+v", dry)
	}
	if _, err := os.Stat(filepath.Join(root, RepoFolder("o/r"), "snapshots", commitA)); err != nil {
		t.Fatal("dry run deleted")
	}
	res, err := l.Delete(context.Background(), fp, false, false)
	must(t, err)
	if res.Freed != dry.Freed {
		t.Fatalf("freed %d, dry run said %d", res.Freed, dry.Freed)
	}
	blobs := filepath.Join(root, RepoFolder("o/r"), "blobs")
	if _, err := os.Stat(filepath.Join(blobs, sha256Hex(shared))); err != nil {
		t.Fatal("shared blob deleted")
	}
	if _, err := os.Stat(filepath.Join(blobs, gitBlobSHA1(onlyA))); err == nil {
		t.Fatal("unshared blob kept")
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep me" {
		t.Fatal("file outside the cache touched")
	}
	ms, _ := l.List(context.Background())
	if len(ms) != 1 || ms[0].Commit != commitB {
		t.Fatalf("index after delete: %+v", ms)
	}
	// Deleting the last snapshot removes the repo folder.
	res, err = l.Delete(context.Background(), "o/r", false, false)
	must(t, err)
	if res.Freed != int64(len(shared)+len(onlyB)+len(commitB)) { // + refs/main
		t.Fatalf("freed %d", res.Freed)
	}
	if _, err := os.Stat(filepath.Join(root, RepoFolder("o/r"))); err == nil {
		t.Fatal("repo folder left behind")
	}
	if ms, _ := l.List(context.Background()); len(ms) != 0 {
		t.Fatalf("index: %+v", ms)
	}
}

func TestDeleteWholeRepoAndRefusals(t *testing.T) {
	root := t.TempDir()
	cfg := []byte(`{"model_type":"llama"}`)
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": cfg}, "main")
	writeSnapshot(t, root, "o/r", commitB, map[string][]byte{"config.json": []byte(`{}`)})
	// A repo whose snapshots folder is a symlink elsewhere is refused.
	elsewhere := t.TempDir()
	writeSnapshot(t, elsewhere, "o/linked", commitA, map[string][]byte{"config.json": cfg}, "main")
	must(t, os.MkdirAll(filepath.Join(root, RepoFolder("o/linked")), 0o755))
	must(t, os.Symlink(filepath.Join(elsewhere, RepoFolder("o/linked"), "snapshots"), filepath.Join(root, RepoFolder("o/linked"), "snapshots")))
	l := testLib(t, root)
	scanAll(t, l)
	res, err := l.Delete(context.Background(), "o/r", true, false)
	must(t, err)
	if res.Freed != int64(len(cfg)+2+len(commitA)) || len(res.Paths) != 1 {
		t.Fatalf("whole repo: %+v", res)
	}
	ms, _ := l.List(context.Background())
	for _, m := range ms {
		if m.Repo == "o/r" {
			t.Fatalf("o/r still indexed")
		}
	}
	if _, err := l.Delete(context.Background(), "nope/nope", false, false); err == nil {
		t.Fatal("deleted a missing model")
	}
	if _, err := l.Delete(context.Background(), "o/linked", false, false); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("delete through a symlinked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, RepoFolder("o/linked"), "snapshots", commitA)); err != nil {
		t.Fatal("target of a symlinked folder was touched")
	}
}
