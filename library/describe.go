package library

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"hark/mlx/safetensors"
	"hark/models/profile"
)

// readConfig parses config.json, recording why it could not.
func readConfig(m *Model, dir string, st fs.FileInfo) *profile.Config {
	if st == nil {
		m.Problems = append(m.Problems, "no config.json")
		return nil
	}
	b, err := readLimited(filepath.Join(dir, "config.json"), profile.MaxConfigBytes)
	if err != nil {
		m.Problems = append(m.Problems, "config.json: "+describeErr(err))
		return nil
	}
	if h, err := ConfigFingerprint(b); err == nil {
		m.ConfigHash = h
	}
	cfg, err := profile.Parse(b)
	if err != nil {
		m.Problems = append(m.Problems, err.Error())
		return nil
	}
	return cfg
}

// countParams sums parameters over every safetensors file's header.
func countParams(m *Model, dir string, fileSt map[string]fs.FileInfo) {
	var stats tensorStats
	bitsFor := func(module string) int {
		if m.Quant == nil {
			return 0
		}
		if o, ok := m.Quant.Overrides[module]; ok && o.Bits > 0 {
			return o.Bits
		}
		return m.Quant.Bits
	}
	for _, f := range m.Files {
		if !strings.HasSuffix(f.Name, ".safetensors") || f.Problem != "" {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		h, err := safetensors.ReadHeader(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				// The reader's errors start with the full path; the
				// problem names the file relative to the snapshot.
				msg := strings.TrimPrefix(describeErr(err), path+": ")
				m.Problems = append(m.Problems, fmt.Sprintf("%s: %s", f.Name, msg))
			}
			continue
		}
		stats.add(h, bitsFor)
	}
	m.Params = stats.params
	if m.DType == "" {
		m.DType = stats.dtype()
	}
}

// checkShards flags shards named by model.safetensors.index.json that the
// snapshot lacks: a download that stopped halfway.
func checkShards(m *Model, dir string, fileSt map[string]fs.FileInfo) {
	const index = "model.safetensors.index.json"
	if fileSt[index] == nil {
		return
	}
	b, err := readLimited(filepath.Join(dir, index), maxIndexBytes)
	if err != nil {
		m.Problems = append(m.Problems, index+": "+describeErr(err))
		return
	}
	var ix struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		m.Problems = append(m.Problems, index+": not valid JSON")
		m.Incomplete = true
		return
	}
	have := map[string]bool{}
	for _, f := range m.Files {
		have[f.Name] = f.Problem == ""
	}
	var missing []string
	done := map[string]bool{}
	for _, shard := range ix.WeightMap {
		if !have[shard] && !done[shard] {
			done[shard] = true
			missing = append(missing, shard)
		}
	}
	sort.Strings(missing)
	for _, s := range missing {
		if _, listed := have[s]; listed {
			continue // already reported as a broken file
		}
		m.Problems = append(m.Problems, fmt.Sprintf("missing %s, named in %s", safeName(s), index))
	}
	if len(missing) > 0 {
		m.Incomplete = true
	}
}

// noWeights is the problem of a model folder without weights: most often
// a download whose weights are still arriving (huggingface_hub links a
// file into the snapshot only once it is complete).
const noWeights = "no weights: the folder has no *.safetensors files (a download not finished?)"

// checkWeightsPresent marks a chat or speech model without any weights
// as incomplete: listing it as ready would end in "no such file" at load.
func checkWeightsPresent(m *Model) {
	if m.Kind != profile.KindChat && m.Kind != profile.KindSpeech {
		return
	}
	for _, f := range m.Files {
		if strings.HasSuffix(f.Name, ".safetensors") {
			return
		}
	}
	if !m.Incomplete { // missing shards are already reported
		m.Problems = append(m.Problems, noWeights)
	}
	m.Incomplete = true
}

func ggufFiles(files []File) int {
	n := 0
	for _, f := range files {
		if strings.HasSuffix(strings.ToLower(f.Name), ".gguf") {
			n++
		}
	}
	return n
}
