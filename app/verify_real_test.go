package app

import (
	"context"
	"path/filepath"
	"testing"

	"hark/library"
	"hark/library/store"
	"hark/mlx/mlxtest"
)

// Every real checkpoint in the assets verifies as "will load" against the
// families this build registers (library's own test binary has stand-ins
// only): verify refuses architectures Hark cannot run, so a family left
// out of the registry would show here.
func TestVerifyRealCheckpointsAllFamilies(t *testing.T) {
	assets := mlxtest.Assets(t)
	dirs, _ := filepath.Glob(filepath.Join(assets, "families", "*", "hf"))
	dirs = append(dirs, filepath.Join(assets, "models", "stories260K", "hf"), filepath.Join(assets, "models", "stories260K-4bit-g32"), filepath.Join(assets, "whisper", "golden", "model"))
	if len(dirs) < 4 {
		t.Fatalf("found only %v under %s", dirs, assets)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, d := range dirs {
		l := library.New(library.Options{DB: db, Roots: []library.Root{{Path: filepath.Dir(d), Origin: "test"}}})
		if _, err := l.Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		res, err := l.Verify(context.Background(), d, nil)
		if err != nil || !res.OK || len(res.Checks) < 2 {
			t.Errorf("%s: %+v %v", d, res, err)
		}
		l.Close()
	}
}
