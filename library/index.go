package library

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"hark/library/store"
	"hark/models/profile"
)

// index is the library's tables in Hark's database.
type index struct{ db *store.DB }

const modelCols = `path, id, fingerprint, source, root, unit, repo, commit_hash, content_id, config_hash,
	model_type, architectures, kind, family, params, dtype, quant_bits, quant_group, quant_mode, quant,
	context_length, size_bytes, modified_ms, supported, reason, problems, incomplete, downloading, scanned_ms, active_params`

// replaceUnits makes the rows of each unit exactly models[unit], and when
// root is not empty also drops rows of root whose unit is no longer there.
// All in one transaction, so readers never see a half-updated repo.
func (ix *index) replaceUnits(ctx context.Context, root string, keep []string, models map[string][]Model) error {
	now := time.Now().UnixMilli()
	return ix.db.Tx(ctx, func(tx *sql.Tx) error {
		if root != "" {
			if err := dropMissingUnits(ctx, tx, root, keep); err != nil {
				return err
			}
		}
		del, err := tx.PrepareContext(ctx, `DELETE FROM library_models WHERE unit = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		ins, err := tx.PrepareContext(ctx, `INSERT INTO library_models(`+modelCols+`) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(path) DO UPDATE SET scanned_ms = excluded.scanned_ms`)
		if err != nil {
			return err
		}
		defer ins.Close()
		insRef, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO library_refs(path, ref) VALUES(?, ?)`)
		if err != nil {
			return err
		}
		defer insRef.Close()
		insFile, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO library_files(path, name, size, blob, problem) VALUES(?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insFile.Close()
		for unit, ms := range models {
			if _, err := del.ExecContext(ctx, unit); err != nil {
				return fmt.Errorf("clear %s: %w", unit, err)
			}
			for i := range ms {
				if err := insertModel(ctx, ins, insRef, insFile, &ms[i], now); err != nil {
					return fmt.Errorf("index %s: %w", ms[i].Path, err)
				}
			}
		}
		return nil
	})
}

func dropMissingUnits(ctx context.Context, tx *sql.Tx, root string, keep []string) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT unit FROM library_models WHERE root = ?`, root)
	if err != nil {
		return err
	}
	var gone []string
	want := map[string]bool{}
	for _, u := range keep {
		want[u] = true
	}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return err
		}
		if !want[u] {
			gone = append(gone, u)
		}
	}
	rows.Close()
	for _, u := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM library_models WHERE unit = ?`, u); err != nil {
			return err
		}
	}
	return nil
}

// dropRootsExcept removes rows of roots no longer configured.
func (ix *index) dropRootsExcept(ctx context.Context, roots []string) error {
	q := `DELETE FROM library_models`
	args := []any{}
	if len(roots) > 0 {
		q += ` WHERE root NOT IN (?` + strings.Repeat(",?", len(roots)-1) + `)`
		for _, r := range roots {
			args = append(args, r)
		}
	}
	_, err := ix.db.ExecContext(ctx, q, args...)
	return err
}

func insertModel(ctx context.Context, ins, insRef, insFile *sql.Stmt, m *Model, now int64) error {
	arch, _ := json.Marshal(nonNil(m.Architectures))
	probs, _ := json.Marshal(nonNil(m.Problems))
	var qb, qg sql.NullInt64
	var qm, qj sql.NullString
	if m.Quant != nil {
		qb = sql.NullInt64{Int64: int64(m.Quant.Bits), Valid: true}
		qg = sql.NullInt64{Int64: int64(m.Quant.GroupSize), Valid: true}
		qm = sql.NullString{String: m.Quant.Mode, Valid: true}
		b, _ := json.Marshal(m.Quant)
		qj = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := ins.ExecContext(ctx, m.Path, m.ID, m.Fingerprint, m.Source, m.Root, m.Unit, m.Repo, m.Commit, m.ContentID, m.ConfigHash,
		m.ModelType, string(arch), string(m.Kind), m.Family, m.Params, m.DType, qb, qg, qm, qj,
		m.ContextLength, m.Size, modTimeOf(m.Modified), m.Supported, m.Reason, string(probs), m.Incomplete, m.Downloading, now, m.ActiveParams); err != nil {
		return err
	}
	for _, r := range m.Refs {
		if _, err := insRef.ExecContext(ctx, m.Path, r); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		if _, err := insFile.ExecContext(ctx, m.Path, f.Name, f.Size, f.Blob, f.Problem); err != nil {
			return err
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// list returns every model without its file list (FileCount says how many),
// in root order then repo, newest first.
func (ix *index) list(ctx context.Context, where string, args ...any) ([]Model, error) {
	q := `SELECT ` + modelCols + `, (SELECT count(*) FROM library_files f WHERE f.path = m.path),
		(SELECT group_concat(ref, char(10)) FROM (SELECT ref FROM library_refs r WHERE r.path = m.path ORDER BY ref))
		FROM library_models m`
	if where != "" {
		q += " WHERE " + where
	}
	q += ` ORDER BY repo, modified_ms DESC, path`
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read library: %w", err)
	}
	defer rows.Close()
	out := []Model{}
	for rows.Next() {
		var m Model
		var arch, probs, kind string
		var qb, qg sql.NullInt64
		var qm, qj, refs sql.NullString
		var mod, scanned int64
		if err := rows.Scan(&m.Path, &m.ID, &m.Fingerprint, &m.Source, &m.Root, &m.Unit, &m.Repo, &m.Commit, &m.ContentID, &m.ConfigHash,
			&m.ModelType, &arch, &kind, &m.Family, &m.Params, &m.DType, &qb, &qg, &qm, &qj,
			&m.ContextLength, &m.Size, &mod, &m.Supported, &m.Reason, &probs, &m.Incomplete, &m.Downloading, &scanned, &m.ActiveParams,
			&m.FileCount, &refs); err != nil {
			return nil, fmt.Errorf("read library: %w", err)
		}
		m.Kind = profile.Kind(kind)
		json.Unmarshal([]byte(arch), &m.Architectures)
		json.Unmarshal([]byte(probs), &m.Problems)
		if qj.Valid {
			m.Quant = &profile.Quant{}
			if json.Unmarshal([]byte(qj.String), m.Quant) != nil {
				m.Quant = &profile.Quant{Bits: int(qb.Int64), GroupSize: int(qg.Int64), Mode: qm.String}
			}
		}
		if mod != 0 {
			m.Modified = time.UnixMilli(mod)
		}
		m.Refs = []string{}
		if refs.Valid && refs.String != "" {
			m.Refs = strings.Split(refs.String, "\n")
		}
		m.Architectures, m.Problems = nonNil(m.Architectures), nonNil(m.Problems)
		m.Files = []File{}
		out = append(out, m)
	}
	return out, rows.Err()
}

// errNotFound is returned when no indexed model matches an ID.
var errNotFound = errors.New("no such model")

// get returns one model by path, with its files.
func (ix *index) get(ctx context.Context, path string) (Model, error) {
	ms, err := ix.list(ctx, `path = ?`, path)
	if err != nil {
		return Model{}, err
	}
	if len(ms) == 0 {
		return Model{}, fmt.Errorf("%w: %s", errNotFound, path)
	}
	m := ms[0]
	rows, err := ix.db.QueryContext(ctx, `SELECT name, size, blob, problem FROM library_files WHERE path = ? ORDER BY name`, path)
	if err != nil {
		return Model{}, fmt.Errorf("read files of %s: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var f File
		if err := rows.Scan(&f.Name, &f.Size, &f.Blob, &f.Problem); err != nil {
			return Model{}, err
		}
		m.Files = append(m.Files, f)
	}
	return m, rows.Err()
}
