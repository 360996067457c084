package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx"
	_ "hark/mlx/backends"
)

// The accepted backends are mlx's registry plus "auto": a backend the build
// registers is accepted with no list here to update, and a name no build
// has ("metal", which older versions offered) is refused on save and read
// back as auto.
func TestSettingsBackendsComeFromTheRegistry(t *testing.T) {
	mlx.RegisterBackend("storetest", "", func() (mlx.Backend, error) { return nil, errors.New("never opened") })
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"auto", "cpu", "storetest"} {
		if err := db.SaveSettings(ctx, Settings{Backend: name}); err != nil {
			t.Fatalf("%s refused: %v", name, err)
		}
		if s, err := db.Settings(ctx); err != nil || s.Backend != name {
			t.Fatalf("%s read back as %+v %v", name, s, err)
		}
	}
	err = db.SaveSettings(ctx, Settings{Backend: "metal"})
	names := mlx.Backends()
	if !slices.Contains(names, "cpu") || !slices.Contains(names, "storetest") {
		t.Fatalf("registry %v lacks cpu or the test's backend", names)
	}
	want := `backend "metal" is not available in this build (available: auto, ` + strings.Join(names, ", ") + `)`
	if err == nil || err.Error() != want {
		t.Fatalf("metal: got %v, want %q", err, want)
	}

	if _, err := db.Exec(`UPDATE settings SET value = '"metal"' WHERE key = 'backend'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO settings(key, value, updated_at) VALUES('modelRoots', '["/kept"]', 1)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`); err != nil {
		t.Fatal(err)
	}
	s, err := db.Settings(ctx)
	if err != nil || s.Backend != "auto" || strings.Join(s.ModelRoots, ",") != "/kept" {
		t.Fatalf("stale backend row: %+v %v", s, err)
	}
	// What was read can be saved again: the stale row blocks nothing.
	if err := db.SaveSettings(ctx, s); err != nil {
		t.Fatalf("saving what was read: %v", err)
	}
}
