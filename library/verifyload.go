package library

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"hark/mlx/safetensors"
	"hark/models/profile"
)

// A hash only says a file is the one the Hub served. "Will it load" needs
// the checks loading does: config.json parses, every safetensors header is
// valid (offsets inside the file, known dtypes, shape × dtype = size, no
// overlaps: safetensors.Open's own validation), the index's tensors are in
// their shards, and the weights cover what the config declares.

// loadChecks runs those checks on the fresh description of dir and returns
// what was checked and the problems found.
func loadChecks(m *Model, dir string) (checks, problems []string) {
	rel := func(err error) string { return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "") }
	cfgOK := true
	for _, p := range m.Problems {
		if strings.HasPrefix(p, "no config.json") || strings.HasPrefix(p, "config.json") {
			cfgOK = false
		}
	}
	var raw map[string]any
	if cfgOK {
		if b, err := readLimited(filepath.Join(dir, "config.json"), profile.MaxConfigBytes); err == nil {
			if json.Unmarshal(b, &raw) == nil {
				checks = append(checks, "config.json")
			}
		}
	}
	names := map[string]string{} // tensor -> file
	var shards []string
	files, tensors := 0, 0
	for _, f := range m.Files {
		if !strings.HasSuffix(f.Name, ".safetensors") || f.Problem != "" {
			continue
		}
		st, err := safetensors.Open(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil {
			problems = append(problems, rel(err))
			continue
		}
		files++
		for _, n := range st.Names() {
			names[n] = f.Name
			tensors++
		}
		st.Close()
		shards = append(shards, f.Name)
	}
	if files > 0 {
		checks = append(checks, fmt.Sprintf("%d safetensors header%s (%d tensors)", files, plural(files), tensors))
	}
	problems = append(problems, indexCoverage(m, dir, names, shards)...)
	if raw != nil && files > 0 && len(problems) == 0 {
		cov, ps := layerCoverage(raw, names)
		if cov != "" {
			checks = append(checks, cov)
		}
		problems = append(problems, ps...)
		if m.Kind == profile.KindChat && m.Supported {
			problems = append(problems, headCoverage(names)...)
		}
	}
	return checks, problems
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// indexCoverage checks that every tensor model.safetensors.index.json
// names is in the shard it names (missing shards describeModel reports).
func indexCoverage(m *Model, dir string, names map[string]string, shards []string) []string {
	const index = "model.safetensors.index.json"
	b, err := readLimited(filepath.Join(dir, index), maxIndexBytes)
	if err != nil {
		return nil // absent, or already reported
	}
	var ix struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if json.Unmarshal(b, &ix) != nil {
		return nil // describeModel reports it
	}
	have := map[string]bool{}
	for _, s := range shards {
		have[s] = true
	}
	var out []string
	keys := make([]string, 0, len(ix.WeightMap))
	for k := range ix.WeightMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, t := range keys {
		shard := ix.WeightMap[t]
		if !have[shard] {
			continue
		}
		if names[t] != shard {
			out = append(out, fmt.Sprintf("tensor %s is listed in %s but missing from %s", t, index, shard))
			if len(out) == 5 {
				out = append(out, "(more missing tensors not listed)")
				break
			}
		}
	}
	return out
}

// layerRe finds the block index in a tensor name: model.layers.3.mlp...,
// transformer.h.3..., blocks.3...
var layerRe = regexp.MustCompile(`(?:^|\.)(?:layers|h|blocks)\.(\d+)\.(.+)$`)

// layerCoverage checks the weights against num_hidden_layers: every layer
// is there, and holds every tensor most layers hold (a layer missing its
// k_proj cannot load). With tie_word_embeddings false an lm_head is needed.
func layerCoverage(cfg map[string]any, names map[string]string) (string, []string) {
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		if _, has := cfg["num_hidden_layers"]; !has {
			cfg = tc
		}
	}
	nl, ok := cfg["num_hidden_layers"].(float64)
	if !ok || nl <= 0 || nl > 10000 || nl != float64(int(nl)) {
		return "", nil
	}
	n := int(nl)
	// Layers are compared only with layers of their own kind: hybrid
	// models (sliding and full attention, linear attention) hold different
	// tensors per kind. Configs that vary layers in other ways (dense
	// layers before MoE ones, shared KV) get only the every-layer check.
	group := make([]string, n)
	if lt, ok := cfg["layer_types"].([]any); ok && len(lt) == n {
		for i, v := range lt {
			group[i] = fmt.Sprint(v)
		}
	}
	uniform := true
	for _, k := range []string{"first_k_dense_replace", "moe_layer_freq", "mlp_only_layers", "decoder_sparse_step", "num_kv_shared_layers", "dense_layers"} {
		if _, has := cfg[k]; has {
			uniform = false
		}
	}
	layers := make([]map[string]bool, n)
	count := map[string]map[string]int{} // group -> suffix -> layers with it
	size := map[string]int{}             // layers per group
	for _, g := range group {
		size[g]++
	}
	for name := range names {
		mm := layerRe.FindStringSubmatch(name)
		if mm == nil {
			continue
		}
		i, err := strconv.Atoi(mm[1])
		if err != nil || i >= n {
			continue // e.g. multi-token-prediction layers past the stack
		}
		if layers[i] == nil {
			layers[i] = map[string]bool{}
		}
		if !layers[i][mm[2]] {
			layers[i][mm[2]] = true
			if count[group[i]] == nil {
				count[group[i]] = map[string]int{}
			}
			count[group[i]][mm[2]]++
		}
	}
	var out []string
	if len(count) == 0 {
		return "", nil // names this check does not know: say nothing
	}
	for i, l := range layers {
		if l == nil {
			out = append(out, fmt.Sprintf("the weights have no tensors for layer %d of the %d config.json declares", i, n))
			continue
		}
		if !uniform {
			continue
		}
		var lack []string
		for suffix, c := range count[group[i]] {
			if !l[suffix] && c > size[group[i]]/2 {
				lack = append(lack, suffix)
			}
		}
		sort.Strings(lack)
		for _, s := range lack {
			out = append(out, fmt.Sprintf("layer %d lacks %s, which the other layers have", i, s))
		}
		if len(out) >= 5 {
			break
		}
	}
	if tie, ok := cfg["tie_word_embeddings"].(bool); ok && !tie {
		found := false
		for name := range names {
			found = found || strings.HasSuffix(name, "lm_head.weight")
		}
		if !found {
			out = append(out, "config.json says tie_word_embeddings is false, but there is no lm_head.weight")
		}
	}
	return fmt.Sprintf("tensors of all %d layers", n), out
}
