package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"hark/mlx"
	"hark/models/nn"
)

// Settings are the user's persisted preferences. Each field is stored under
// its json name as its own row, so saving one setting never clobbers another
// written concurrently by a different window.
type Settings struct {
	// ModelRoots are extra folders scanned for models besides the Hugging
	// Face cache (LM Studio's models folder, any folder of model dirs).
	ModelRoots []string `json:"modelRoots"`
	// DefaultChatModel and DefaultSpeechModel are model IDs (fingerprint,
	// org/repo or path); empty means "none chosen yet".
	DefaultChatModel   string `json:"defaultChatModel"`
	DefaultSpeechModel string `json:"defaultSpeechModel"`
	// Backend is the compute backend: "auto" or one of mlx.Backends();
	// mlx.Select applies it under --backend and HARK_BACKEND.
	Backend string `json:"backend"`
	// WatchBudget is how many folders one model root may watch for
	// changes; a root with more is rescanned periodically instead. 0 (what
	// a client that predates the setting sends) means the default.
	WatchBudget int `json:"watchBudget"`
	// Theme is the look of the UI: "system" follows the OS, "light" or
	// "dark" pin one. Empty (a client that predates it) means system.
	Theme string `json:"theme"`
	// APIDisabled turns the OpenAI-compatible /v1 routes off (they are on
	// by default, so the zero value a client that predates it sends keeps
	// them on).
	APIDisabled bool `json:"apiDisabled"`
	// APIKey, when set, is required as a Bearer token on /v1 routes; an
	// address that is not loopback needs one (or --api-key).
	APIKey string `json:"apiKey"`
	// CORSOrigins are web origins (scheme://host[:port]) whose pages may
	// call the /v1 routes from a browser.
	CORSOrigins []string `json:"corsOrigins"`
	// IdleUnloadMinutes unloads a model nobody used for this long (0: the
	// default).
	IdleUnloadMinutes int `json:"idleUnloadMinutes"`
	// MaxUploadMB caps an audio upload to /v1/audio (0: the default).
	MaxUploadMB int `json:"maxUploadMB"`
	// KVBits is the KV cache a new chat keeps (nn.KVBitsValues: 4 or 8
	// bits quantized, 16 f16; nn.KVFloat32Bits float32, kept as chosen;
	// 0, unset or what a client that predates it sends: the engine's
	// default, engine.DefaultKV). With ContextTokens it is what
	// the Library's fit verdict assumes.
	KVBits int `json:"kvBits"`
	// ContextTokens is the context length the Library's fit verdict
	// assumes (0: 8,192 tokens, or the model's window when shorter).
	ContextTokens int `json:"contextTokens"`
}

// Themes are the accepted values of Settings.Theme.
var Themes = []string{"system", "light", "dark"}

// DefaultSettings are what a new user starts with.
func DefaultSettings() Settings {
	return Settings{ModelRoots: []string{}, Backend: "auto", WatchBudget: 8192, Theme: "system", CORSOrigins: []string{}, IdleUnloadMinutes: 10, MaxUploadMB: 1024}
}

// Backends lists the accepted values of Settings.Backend: "auto" and
// the backends this build registered, so no list is kept here.
func Backends() []string { return append([]string{"auto"}, mlx.Backends()...) }

// The context lengths Settings accepts: a short exchange to far past any
// model's window.
const (
	minContextTokens = 256
	maxContextTokens = 1 << 22
)

// maxWatchBudget is far above inotify's usual per-user allowance.
const maxWatchBudget = 1 << 20

// Validate reports the first invalid field with a message fit for a user.
func (s Settings) Validate() error {
	if !slices.Contains(Backends(), s.Backend) {
		return fmt.Errorf("backend %q is not available in this build (available: %s)", s.Backend, strings.Join(Backends(), ", "))
	}
	for _, r := range s.ModelRoots {
		if strings.TrimSpace(r) == "" {
			return errors.New("model roots must not contain an empty path")
		}
	}
	if s.Theme != "" && !slices.Contains(Themes, s.Theme) {
		return fmt.Errorf("theme %q is not one of %s", s.Theme, strings.Join(Themes, ", "))
	}
	if s.WatchBudget < 0 || s.WatchBudget > maxWatchBudget {
		return fmt.Errorf("the watch budget must be between 1 and %d folders, not %d", maxWatchBudget, s.WatchBudget)
	}
	if s.IdleUnloadMinutes < 0 || s.IdleUnloadMinutes > 7*24*60 {
		return fmt.Errorf("the idle unload time must be between 1 and %d minutes, not %d", 7*24*60, s.IdleUnloadMinutes)
	}
	if s.MaxUploadMB < 0 || s.MaxUploadMB > 1<<20 {
		return fmt.Errorf("the upload limit must be between 1 and %d MB, not %d", 1<<20, s.MaxUploadMB)
	}
	if s.KVBits != 0 && s.KVBits != nn.KVFloat32Bits && !slices.Contains(nn.KVBitsValues, s.KVBits) {
		return fmt.Errorf("the KV cache can be kept in %v bits, %d (float32) or 0 (the default), not %d", nn.KVBitsValues, nn.KVFloat32Bits, s.KVBits)
	}
	if s.ContextTokens != 0 && (s.ContextTokens < minContextTokens || s.ContextTokens > maxContextTokens) {
		return fmt.Errorf("the context length must be between %d and %d tokens, or 0 for the default, not %d", minContextTokens, maxContextTokens, s.ContextTokens)
	}
	if s.APIKey != "" && (len(s.APIKey) < 8 || strings.ContainsAny(s.APIKey, " \t\r\n")) {
		return errors.New("the API key must be at least 8 characters, without spaces")
	}
	for _, o := range s.CORSOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("CORS origin %q is not an origin like https://example.com or http://localhost:3000", o)
		}
	}
	return nil
}

// settingFields maps json names to struct field indexes, computed once.
var settingFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeOf(Settings{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = i
	}
	return m
}()

// Settings returns the saved settings over the defaults. A row with a value
// this version cannot decode is ignored rather than failing the app.
func (db *DB) Settings(ctx context.Context) (Settings, error) {
	s := DefaultSettings()
	rows, err := db.QueryContext(ctx, `SELECT key, value FROM settings`)
	if err != nil {
		return s, fmt.Errorf("read settings: %w", classify(err))
	}
	defer rows.Close()
	v := reflect.ValueOf(&s).Elem()
	for rows.Next() {
		var key, val string
		if err := rows.Scan(&key, &val); err != nil {
			return s, fmt.Errorf("read settings: %w", err)
		}
		i, ok := settingFields[key]
		if !ok {
			continue
		}
		f := reflect.New(v.Field(i).Type())
		if json.Unmarshal([]byte(val), f.Interface()) == nil {
			v.Field(i).Set(f.Elem())
		}
	}
	if s.ModelRoots == nil {
		s.ModelRoots = []string{}
	}
	if s.CORSOrigins == nil {
		s.CORSOrigins = []string{}
	}
	if !slices.Contains(Backends(), s.Backend) {
		// Saved by a build with other backends (or an old "metal"): left
		// as it was, every later save would fail on a field the user did
		// not touch.
		s.Backend = DefaultSettings().Backend
	}
	return s, rows.Err()
}

// SaveSettings validates and writes every field in one transaction.
func (db *DB) SaveSettings(ctx context.Context, s Settings) error {
	if s.ModelRoots == nil {
		s.ModelRoots = []string{}
	}
	if s.WatchBudget == 0 {
		s.WatchBudget = DefaultSettings().WatchBudget
	}
	if s.Theme == "" {
		s.Theme = DefaultSettings().Theme
	}
	if s.IdleUnloadMinutes == 0 {
		s.IdleUnloadMinutes = DefaultSettings().IdleUnloadMinutes
	}
	if s.MaxUploadMB == 0 {
		s.MaxUploadMB = DefaultSettings().MaxUploadMB
	}
	if s.CORSOrigins == nil {
		s.CORSOrigins = []string{}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		v := reflect.ValueOf(s)
		now := time.Now().UnixMilli()
		for key, i := range settingFields {
			b, err := json.Marshal(v.Field(i).Interface())
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value, updated_at) VALUES(?, ?, ?)
				ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, string(b), now); err != nil {
				return err
			}
		}
		return nil
	})
}

// tx runs fn in a transaction, committing on nil and rolling back otherwise.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return classify(err)
	}
	return classify(tx.Commit())
}

// Tx is tx for other packages that keep their own tables in this database.
func (db *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error { return db.tx(ctx, fn) }
