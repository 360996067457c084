package library

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// rawST is a safetensors file with the header written as given and
// dataLen bytes of data, to make headers that lie.
func rawST(header string, dataLen int) []byte {
	out := make([]byte, 8, 8+len(header)+dataLen)
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, make([]byte, dataLen)...)
}

// llamaConfig declares three layers; llamaST holds them, complete.
const llamaConfig = `{"model_type":"llama","architectures":["LlamaForCausalLM"],"num_hidden_layers":3,"tie_word_embeddings":true}`

func llamaST(skip string) []byte {
	names := []string{"model.embed_tokens.weight", "model.norm.weight",
		"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
		"model.layers.1.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight",
		"model.layers.2.self_attn.q_proj.weight", "model.layers.2.self_attn.k_proj.weight"}
	tensors := map[string][]int64{}
	for _, n := range names {
		if n != skip {
			tensors[n] = []int64{2, 2}
		}
	}
	return safetensorsBytes(tensors, "F32")
}

// Each of these passed "hark models verify" as ok and then failed to
// load (issue 17).
func TestVerifyWillLoad(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"offsets out of range", map[string][]byte{"model.safetensors": rawST(`{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 8)}, "beyond data size"},
		{"unknown dtype", map[string][]byte{"model.safetensors": rawST(`{"w":{"dtype":"Q7","shape":[4],"data_offsets":[0,16]}}`, 16)}, `unknown dtype "Q7"`},
		{"shape and size disagree", map[string][]byte{"model.safetensors": rawST(`{"w":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}}`, 16)}, "needs 4×2"},
		{"overlapping tensors", map[string][]byte{"model.safetensors": rawST(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, 16)}, "overlaps"},
		{"a layer lacks a tensor", map[string][]byte{"model.safetensors": llamaST("model.layers.1.self_attn.k_proj.weight")}, "layer 1 lacks self_attn.k_proj.weight"},
		{"a layer is missing", map[string][]byte{"model.safetensors": safetensorsBytes(map[string][]int64{"model.embed_tokens.weight": {2}, "model.layers.0.mlp.weight": {2}, "model.layers.2.mlp.weight": {2}}, "F32")}, "no tensors for layer 1"},
		{"index names a tensor its shard lacks", map[string][]byte{
			"model-1.safetensors":          llamaST(""),
			"model.safetensors.index.json": []byte(`{"weight_map":{"model.norm.weight":"model-1.safetensors","lm_head.weight":"model-1.safetensors"}}`),
		}, "lm_head.weight is listed in model.safetensors.index.json but missing from model-1.safetensors"},
		{"config.json is not JSON", map[string][]byte{"config.json": []byte(`{"model_type":`), "model.safetensors": llamaST("")}, "config.json"},
		{"no weights at all", map[string][]byte{"tokenizer.json": []byte(`{}`)}, "no weights"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string][]byte{"config.json": []byte(llamaConfig)}
			for k, v := range c.files {
				files[k] = v
			}
			writeSnapshot(t, root, "o/r", commitA, files, "main")
			l := testLib(t, root)
			scanAll(t, l)
			res, err := l.Verify(context.Background(), "o/r", nil)
			must(t, err)
			if res.OK || !strings.Contains(strings.Join(res.Problems, "\n"), c.want) {
				t.Fatalf("verify %+v, want a problem with %q", res, c.want)
			}
			// The list stops calling it ready.
			m, err := l.Get(context.Background(), "o/r")
			must(t, err)
			if m.Supported {
				t.Errorf("still supported after a failed verify: %+v", m)
			}
		})
	}
}

// A plain folder (no hashes) gets a real verdict from the load checks.
func TestVerifyPlainFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "org", "model")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(llamaConfig), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), llamaST(""), 0o644))
	l := testLib(t, root)
	scanAll(t, l)
	res, err := l.Verify(context.Background(), dir, nil)
	must(t, err)
	checks := strings.Join(res.Checks, ", ")
	if !res.OK || res.Checked != 0 || checks != "config.json, 1 safetensors header (8 tensors), tensors of all 3 layers" {
		t.Fatalf("clean plain folder: %+v", res)
	}
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), rawST(`{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 4), 0o644))
	if res, err = l.Verify(context.Background(), dir, nil); err != nil || res.OK {
		t.Fatalf("truncated weights in a plain folder: %+v %v", res, err)
	}
}

// A download in progress: the config and tokenizer are linked, the
// weights are still a .incomplete blob. It is Incomplete, never Ready,
// and a passing verify later clears a failed one.
func TestIncompleteDownloadIsNotReady(t *testing.T) {
	root := t.TempDir()
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(llamaConfig), "tokenizer.json": []byte(`{}`)}, "main")
	blobs := filepath.Join(root, RepoFolder("o/r"), "blobs")
	must(t, os.WriteFile(filepath.Join(blobs, "0123abcd.incomplete"), []byte("partial"), 0o644))
	unlock, err := lockBlob(context.Background(), root, RepoFolder("o/r"), "0123abcd", func() {})
	must(t, err)
	l := testLib(t, root)
	ms := scanAll(t, l)
	if len(ms) != 1 || !ms[0].Incomplete || !ms[0].Downloading || ms[0].Supported {
		t.Fatalf("downloading model %+v", ms)
	}
	// The download stops without finishing (killed: its lock goes): still
	// incomplete, no longer downloading, the partial blob kept to resume.
	unlock()
	ms = scanAll(t, l)
	if !ms[0].Incomplete || ms[0].Downloading || !strings.Contains(strings.Join(ms[0].Problems, "|"), "no weights") {
		t.Fatalf("abandoned download %+v", ms[0])
	}
	if n, size := PartialBlobs(filepath.Join(root, RepoFolder("o/r"))); n != 1 || size != int64(len("partial")) {
		t.Fatalf("partial blobs %d, %d bytes", n, size)
	}
	must(t, os.Remove(filepath.Join(blobs, "0123abcd.incomplete")))
	ms = scanAll(t, l)
	if !ms[0].Incomplete || ms[0].Downloading {
		t.Fatalf("abandoned download %+v", ms[0])
	}
	// The weights arrive; verify passes and the model is ready.
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"model.safetensors": llamaST("")}, "main")
	ms = scanAll(t, l)
	res, err := l.Verify(context.Background(), "o/r", nil)
	must(t, err)
	m, _ := l.Get(context.Background(), "o/r")
	if !res.OK || ms[0].Incomplete || !m.Supported {
		t.Fatalf("complete model: verify %+v, model %+v", res, m)
	}
}

// Verify status follows the disk: a failed verify marks the model, a
// change to it (here, a repaired blob) and a passing verify clear it.
func TestVerifyFailureShowsInList(t *testing.T) {
	root := t.TempDir()
	st := llamaST("")
	writeSnapshot(t, root, "o/r", commitA, map[string][]byte{"config.json": []byte(llamaConfig), "model.safetensors": st}, "main")
	l := testLib(t, root)
	scanAll(t, l)
	blob := filepath.Join(root, RepoFolder("o/r"), "blobs", sha256Hex(st))
	bad := append([]byte(nil), st...)
	bad[len(bad)-1] ^= 1
	must(t, os.WriteFile(blob, bad, 0o644))
	res, err := l.Verify(context.Background(), "o/r", nil)
	must(t, err)
	ms, _ := l.List(context.Background())
	if res.OK || ms[0].Supported || !strings.Contains(strings.Join(ms[0].Problems, "|"), "does not match its sha256 hash") {
		t.Fatalf("after a failed verify: %+v", ms[0])
	}
	must(t, os.WriteFile(blob, st, 0o644))
	res, err = l.Verify(context.Background(), "o/r", nil)
	must(t, err)
	ms, _ = l.List(context.Background())
	if !res.OK || !ms[0].Supported || len(ms[0].Problems) != 0 {
		t.Fatalf("after a passing verify: %+v", ms[0])
	}
}

// The load checks must not cry wolf: every real checkpoint in the assets
// (hybrid attention, MoE and KV-sharing layouts included) passes. This
// binary registers stand-in families only (TestMain), so "not supported"
// is left out here; app's TestVerifyRealCheckpointsAllFamilies runs the
// same checkpoints against the real registry.
func TestVerifyRealCheckpoints(t *testing.T) {
	for _, d := range realCheckpoints(t) {
		l := testLib(t, filepath.Dir(d))
		scanAll(t, l)
		res, err := l.Verify(context.Background(), d, nil)
		var problems []string
		for _, p := range res.Problems {
			if !strings.HasPrefix(p, "Hark cannot load it: model_type") {
				problems = append(problems, p)
			}
		}
		if err != nil || len(problems) != 0 || len(res.Mismatches) != 0 || len(res.Checks) < 2 {
			t.Errorf("%s: %+v %v", d, res, err)
		}
	}
}

func realCheckpoints(t *testing.T) []string {
	assets := mlxtest.Assets(t)
	dirs, _ := filepath.Glob(filepath.Join(assets, "families", "*", "hf"))
	return append(dirs, filepath.Join(assets, "models", "stories260K", "hf"), filepath.Join(assets, "models", "stories260K-4bit-g32"), filepath.Join(assets, "whisper", "golden", "model"))
}

// A snapshot folder that is a symlink to itself vanished from the list
// silently.
func TestSelfSymlinkedSnapshotIsReported(t *testing.T) {
	root := t.TempDir()
	repoDir := filepath.Join(root, RepoFolder("o/loop"))
	must(t, os.MkdirAll(filepath.Join(repoDir, "snapshots"), 0o755))
	must(t, os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commitA), 0o644))
	must(t, os.Symlink(commitA, filepath.Join(repoDir, "snapshots", commitA)))
	l := testLib(t, root)
	ms := scanAll(t, l)
	if len(ms) != 1 || !strings.Contains(strings.Join(ms[0].Problems, "|"), "snapshot "+commitA+" is a broken or looping symlink") {
		t.Fatalf("models %+v", ms)
	}
}
