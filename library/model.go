package library

import (
	"time"

	"hark/models/profile"
)

// Model is one indexed snapshot: an HF cache snapshot or a model directory.
type Model struct {
	// Path is the snapshot directory; it is the index's key, since the same
	// snapshot may sit in two roots.
	Path string `json:"path"`
	// ID is how users name it: the fingerprint for HF snapshots, else Path.
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint,omitempty"` // hf:org/repo@commit
	Source      string `json:"source"`                // "hf" or "dir"
	Root        string `json:"root"`
	// Unit is the top-level entry of Root holding this model (the
	// models--org--name folder for HF); the watcher rescans per unit.
	Unit   string   `json:"unit"`
	Repo   string   `json:"repo,omitempty"` // org/name; for dirs the path under the root
	Commit string   `json:"commit,omitempty"`
	Refs   []string `json:"refs"`
	// ContentID identifies a non-HF directory by content: see ContentID.
	ContentID     string       `json:"contentId,omitempty"`
	ConfigHash    string       `json:"configHash,omitempty"`
	ModelType     string       `json:"modelType,omitempty"`
	Architectures []string     `json:"architectures"`
	Kind          profile.Kind `json:"kind"`
	Family        string       `json:"family,omitempty"`
	Params        int64        `json:"params"`
	// ActiveParams is what one token uses, for mixture-of-experts models
	// (0 otherwise).
	ActiveParams  int64          `json:"activeParams,omitempty"`
	DType         string         `json:"dtype,omitempty"`
	Quant         *profile.Quant `json:"quant,omitempty"`
	ContextLength int            `json:"contextLength,omitempty"`
	Files         []File         `json:"files"`
	FileCount     int            `json:"fileCount"`
	Size          int64          `json:"size"` // bytes on disk, each blob once
	Modified      time.Time      `json:"modified"`
	Supported     bool           `json:"supported"`
	Reason        string         `json:"reason,omitempty"` // why unsupported
	// Problems are what is wrong with this model on disk (dangling links,
	// missing shards, unreadable config...), one sentence each.
	Problems   []string `json:"problems"`
	Incomplete bool     `json:"incomplete"`
	// Downloading means the repo holds *.incomplete blobs.
	Downloading bool `json:"downloading,omitempty"`
	// Fit is whether the model fits in this machine's memory ("fits",
	// "tight", "too_big"), and MemoryNeeded the estimate behind it: the
	// engine's, set when the app lists models, never stored, since the
	// memory available changes.
	Fit          string `json:"fit,omitempty"`
	MemoryNeeded int64  `json:"memoryNeeded,omitempty"`
}

// File is one file of a snapshot.
type File struct {
	Name string `json:"name"` // slash-separated path inside the snapshot
	Size int64  `json:"size"`
	// Blob is the blob file name in the cache's blobs/ folder for HF
	// snapshot symlinks (the file's sha256 or git sha1), else empty.
	Blob    string `json:"blob,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// QuantLabel is the short quantization text for tables ("" when none).
func (m *Model) QuantLabel() string { return m.Quant.String() }
