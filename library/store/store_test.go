package store

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func schema(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestMigrateFromEmpty(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "hark.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.Version()
	if err != nil || v != LatestVersion() {
		t.Fatalf("version %d, %v; want %d", v, err, LatestVersion())
	}
	var mode string
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode %q, want wal", mode)
	}
	var fk int
	db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk)
	if fk != 1 {
		t.Errorf("foreign_keys off")
	}
}

// Every earlier schema must upgrade to exactly the schema a fresh database
// gets, keeping the data written at the old version.
func TestMigrateFromEveryEarlierVersion(t *testing.T) {
	fresh, err := Open(filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	want := schema(t, fresh)
	fresh.Close()
	for v := 1; v < LatestVersion(); v++ {
		path := filepath.Join(t.TempDir(), "old.db")
		old, err := openTo(path, v)
		if err != nil {
			t.Fatalf("build v%d: %v", v, err)
		}
		if _, err := old.Exec(`INSERT INTO settings(key, value, updated_at) VALUES('backend', '"cpu"', 1)`); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		old.Close()
		db, err := Open(path)
		if err != nil {
			t.Fatalf("upgrade from v%d: %v", v, err)
		}
		if got := schema(t, db); !reflect.DeepEqual(got, want) {
			t.Errorf("schema after upgrade from v%d differs:\n got %q\nwant %q", v, got, want)
		}
		s, err := db.Settings(context.Background())
		if err != nil || s.Backend != "cpu" {
			t.Errorf("upgrade from v%d lost settings: %+v %v", v, s, err)
		}
		db.Close()
	}
}

func TestTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA user_version = 999`)
	db.Close()
	_, err = Open(path)
	if !errors.Is(err, ErrTooNew) || !strings.Contains(err.Error(), path) {
		t.Fatalf("want ErrTooNew naming the file, got %v", err)
	}
}

func TestCorruptFileIsNamedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	junk := []byte(strings.Repeat("this is not sqlite ", 400))
	os.WriteFile(path, junk, 0o644)
	_, err := Open(path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it aside") {
		t.Errorf("message should name the file and say what to do: %v", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != string(junk) {
		t.Fatal("corrupt file was modified")
	}
	// Moving it aside gives a fresh start.
	os.Rename(path, path+".bad")
	db, err := Open(path)
	if err != nil {
		t.Fatalf("fresh start after move: %v", err)
	}
	db.Close()
}

func TestDamagedPagesAreCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	b, _ := os.ReadFile(path)
	// Keep the valid header, smash the schema page.
	for i := 100; i < len(b) && i < 4096; i++ {
		b[i] = 0xA5
	}
	os.WriteFile(path, b, 0o644)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if _, err := Open(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores permission bits; a directory in the way is the
		// unreadable case root still hits.
		path := filepath.Join(t.TempDir(), "hark.db")
		os.Mkdir(path, 0o755)
		_, err := Open(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("want error naming %s, got %v", path, err)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "hark.db")
	os.WriteFile(path, nil, 0o000)
	_, err := Open(path)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), path) {
		t.Fatalf("want permission error naming the file, got %v", err)
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := db.Settings(ctx)
	if err != nil || !reflect.DeepEqual(s, DefaultSettings()) {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	want := Settings{ModelRoots: []string{"/models", "/other"}, DefaultChatModel: "hf:org/repo@abc", DefaultSpeechModel: "/w", Backend: "cpu", WatchBudget: 20000, Theme: "dark",
		APIDisabled: true, APIKey: "sk-local-123", CORSOrigins: []string{"http://localhost:3000"}, IdleUnloadMinutes: 3, MaxUploadMB: 50}
	if err := db.SaveSettings(ctx, want); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Settings(ctx)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v, want %+v", got, err, want)
	}
	if err := db.SaveSettings(ctx, Settings{Backend: "gpu"}); err == nil || !strings.Contains(err.Error(), "gpu") {
		t.Fatalf("bad backend accepted: %v", err)
	}
	if err := db.SaveSettings(ctx, Settings{Backend: "cpu", Theme: "sepia"}); err == nil || !strings.Contains(err.Error(), "sepia") {
		t.Fatalf("bad theme accepted: %v", err)
	}
	for _, bad := range []Settings{
		{Backend: "cpu", CORSOrigins: []string{"localhost:3000"}},
		{Backend: "cpu", CORSOrigins: []string{"https://a.example/path"}},
		{Backend: "cpu", APIKey: "short"},
		{Backend: "cpu", IdleUnloadMinutes: -1},
		{Backend: "cpu", MaxUploadMB: -5},
	} {
		if err := db.SaveSettings(ctx, bad); err == nil {
			t.Fatalf("bad settings accepted: %+v", bad)
		}
	}
	if err := db.SaveSettings(ctx, Settings{Backend: "cpu", WatchBudget: -1}); err == nil || !strings.Contains(err.Error(), "watch budget") {
		t.Fatalf("negative watch budget accepted: %v", err)
	}
	if got2, _ := db.Settings(ctx); !reflect.DeepEqual(got2, want) {
		t.Fatal("rejected save changed settings")
	}
	// A client that does not know the watch budget sends 0: the default.
	if err := db.SaveSettings(ctx, Settings{Backend: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if got3, _ := db.Settings(ctx); got3.WatchBudget != DefaultSettings().WatchBudget {
		t.Fatalf("watch budget %d after a save without it", got3.WatchBudget)
	}
}

func TestBusyDatabaseReportsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// An exclusive lock held by another connection for longer than the
	// busy timeout makes writes fail with ErrInUse rather than hang.
	conn, err := a.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `PRAGMA locking_mode=EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	b, err := openTo(path, 0)
	if err == nil {
		err = b.SaveSettings(context.Background(), DefaultSettings())
		b.Close()
	}
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("want ErrInUse, got %v", err)
	}
}

// Damage in the middle of the file (issue 17): the schema page is intact,
// so only quick_check sees it. Open must name the file, say what to do,
// and change nothing.
func TestDamageInTheMiddleIsCaughtAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hark.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := db.CreateConversation(ctx, Conversation{Title: "long"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		if _, err := db.AddMessage(ctx, Message{ConversationID: c.ID, Role: "user", Content: strings.Repeat("words and more words ", 40)}); err != nil {
			t.Fatal(err)
		}
	}
	db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	mid := len(b) / 2 / page * page
	for i := mid; i < mid+page; i++ {
		b[i] = 0xA5
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("err %v, want ErrCorrupt naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, b) {
		t.Fatal("the damaged file was changed")
	}
}
