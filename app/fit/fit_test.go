package fit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"hark/app/runner"
	"hark/engine"
	"hark/library"
	"hark/mlx/mlxtest"
	"hark/models/profile"
)

// copyModel copies the stories260K snapshot into a temp dir the test may
// break.
func copyModel(t *testing.T) string {
	src := mlxtest.Assets(t, "models", "stories260K", "hf")
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// A Cache gives the figure the runner admits a model with (the engine's
// own estimate and a chat model's prefix cache, runner.Admission), keeps it per snapshot (its
// files are not read again while the snapshot is unchanged), and a second
// Cache is independent of the first: each owner has its own.
func TestCacheEstimatesPerSnapshot(t *testing.T) {
	dir := copyModel(t)
	est, err := engine.Estimate(dir, engine.EstimateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := runner.Admission(runner.Chat, est)
	if want <= est.Total {
		t.Fatalf("a chat model's admission %d does not count its prefix cache beyond the estimate %d", want, est.Total)
	}
	mod := time.Unix(1_700_000_000, 0)
	model := func(mod time.Time) []library.Model {
		return []library.Model{{Path: dir, Modified: mod, Supported: true, Kind: profile.KindChat},
			{Path: dir, Modified: mod, Supported: true, Kind: profile.KindChat, Incomplete: true}}
	}
	c := New()
	got := c.Apply(model(mod), engine.EstimateOptions{})
	if got[0].MemoryNeeded != want || got[0].Fit == "" {
		t.Fatalf("fit %q, memory %d; want a verdict and %d", got[0].Fit, got[0].MemoryNeeded, want)
	}
	if got[1].MemoryNeeded != 0 || got[1].Fit != "" {
		t.Fatalf("an incomplete model got a verdict: %+v", got[1])
	}
	// Its weights gone, the same snapshot still has its cached estimate;
	// a new snapshot, or another owner's cache, reads the files again and
	// finds none.
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	if got := c.Apply(model(mod), engine.EstimateOptions{}); got[0].MemoryNeeded != want {
		t.Fatalf("cached estimate %d, want %d", got[0].MemoryNeeded, want)
	}
	if got := c.Apply(model(mod.Add(time.Second)), engine.EstimateOptions{}); got[0].MemoryNeeded != 0 || got[0].Fit != "" {
		t.Fatalf("a changed snapshot kept the old estimate: %+v", got[0])
	}
	if got := New().Apply(model(mod), engine.EstimateOptions{}); got[0].MemoryNeeded != 0 {
		t.Fatalf("a new cache shared another's estimate: %+v", got[0])
	}
}
