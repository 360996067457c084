package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// IndexName is the conventional name of a sharded checkpoint's index.
const IndexName = "model.safetensors.index.json"

// Set is a sharded checkpoint opened as one tensor namespace.
type Set struct {
	path     string           // index file (or single file) path
	files    map[string]*File // by shard file name
	owner    map[string]*File // tensor name -> shard
	names    []string
	metadata map[string]json.RawMessage
}

// indexFile is the JSON layout of model.safetensors.index.json.
type indexFile struct {
	Metadata  map[string]json.RawMessage `json:"metadata"`
	WeightMap map[string]string          `json:"weight_map"`
}

// OpenIndex opens a sharded checkpoint from its index file or from the
// folder holding it. A folder with no index but a single model.safetensors
// opens as a one-shard Set, so callers need not care which form a model
// uses. Only tensors named in weight_map are visible.
func OpenIndex(path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.IsDir() {
		idx := filepath.Join(path, IndexName)
		if _, err := os.Stat(idx); errors.Is(err, fs.ErrNotExist) {
			return openSingle(filepath.Join(path, "model.safetensors"))
		}
		path = idx
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var ix indexFile
	if err := strictUnmarshal(raw, &ix); err != nil {
		return nil, fmt.Errorf("%s: bad index JSON: %w", path, err)
	}
	if len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: index has no weight_map entries", path)
	}
	s := &Set{path: path, files: map[string]*File{}, owner: map[string]*File{}, metadata: ix.Metadata}
	dir := filepath.Dir(path)
	for _, name := range slices.Sorted(maps.Keys(ix.WeightMap)) {
		shard := ix.WeightMap[name]
		if err := checkShardName(shard); err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		f := s.files[shard]
		if f == nil {
			if f, err = Open(filepath.Join(dir, shard)); err != nil {
				s.Close()
				return nil, fmt.Errorf("%s: shard of tensor %q: %w", path, name, err)
			}
			s.files[shard] = f
		}
		if _, ok := f.hdr.tensors[name]; !ok {
			s.Close()
			return nil, fmt.Errorf("%s: tensor %q: listed in weight_map but missing from %s", path, name, f.path)
		}
		s.owner[name] = f
		s.names = append(s.names, name)
	}
	return s, nil
}

func openSingle(path string) (*Set, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	s := &Set{path: path, files: map[string]*File{filepath.Base(path): f}, owner: map[string]*File{}, names: f.Names()}
	for _, n := range s.names {
		s.owner[n] = f
	}
	return s, nil
}

// checkShardName keeps shard references inside the checkpoint folder.
func checkShardName(shard string) error {
	if shard == "" || filepath.IsAbs(shard) || strings.ContainsAny(shard, `/\`) || shard == "." || shard == ".." {
		return fmt.Errorf("shard file name %q must be a plain file name in the index's folder", shard)
	}
	return nil
}

// Names lists all tensor names in sorted order.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Files lists the open shards sorted by file name.
func (s *Set) Files() []*File {
	out := make([]*File, 0, len(s.files))
	for _, k := range slices.Sorted(maps.Keys(s.files)) {
		out = append(out, s.files[k])
	}
	return out
}

// IndexMetadata is the index's "metadata" object (e.g. total_size), raw.
func (s *Set) IndexMetadata() map[string]json.RawMessage { return s.metadata }

func (s *Set) lookup(name string) (*File, error) {
	f, ok := s.owner[name]
	if !ok {
		return nil, fmt.Errorf("%s: tensor %q: %w", s.path, name, ErrNotFound)
	}
	return f, nil
}

// Tensor returns a tensor's header entry from its shard.
func (s *Set) Tensor(name string) (Info, error) {
	f, err := s.lookup(name)
	if err != nil {
		return Info{}, err
	}
	return f.Tensor(name)
}

// View is File.View on the tensor's shard.
func (s *Set) View(name string) ([]byte, error) {
	f, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	return f.View(name)
}

// Release is File.Release on the tensor's shard.
func (s *Set) Release(name string) {
	if f, err := s.lookup(name); err == nil {
		f.Release(name)
	}
}

// Bytes is File.Bytes on the tensor's shard.
func (s *Set) Bytes(name string) ([]byte, error) {
	f, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	return f.Bytes(name)
}

// Float32s is File.Float32s on the tensor's shard.
func (s *Set) Float32s(name string) ([]float32, error) {
	f, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	return f.Float32s(name)
}

// Uint32s is File.Uint32s on the tensor's shard.
func (s *Set) Uint32s(name string) ([]uint32, error) {
	f, err := s.lookup(name)
	if err != nil {
		return nil, err
	}
	return f.Uint32s(name)
}

// Close closes every shard, reporting the first error.
func (s *Set) Close() error {
	var first error
	for _, f := range s.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Path is the file holding the tensor name (its shard), for a loader that
// maps the tensor itself (Info.Offset is its position in that file).
func (s *Set) Path(name string) (string, error) {
	f, err := s.lookup(name)
	if err != nil {
		return "", err
	}
	return f.Path(), nil
}
