package library

import (
	"fmt"
	"sort"
	"strings"
)

// headCoverage checks the tensors around the layer stack of a chat model:
// every family Hark runs reads its token embedding and final norm from
// beside its layers (P.embed_tokens, P.norm for layers at P.layers.N), so
// a checkpoint without them passes the per-layer checks and still fails to
// load ("missing tensor model.embed_tokens.weight"). Names this does not
// know (no P.layers.N tensors) get no verdict.
func headCoverage(names map[string]string) []string {
	prefixes := map[string]bool{}
	for name := range names {
		if m := layerRe.FindStringIndex(name); m != nil {
			if i := strings.Index(name, "layers."); i >= 0 && (i == 0 || name[i-1] == '.') {
				prefixes[name[:i]] = true
			}
		}
	}
	if len(prefixes) == 0 {
		return nil
	}
	// Multimodal checkpoints also hold vision or audio towers with layers
	// of their own; the text model is the stack that has an embedding.
	var text []string
	for p := range prefixes {
		if names[p+"embed_tokens.weight"] != "" {
			text = append(text, p)
		}
	}
	if len(text) == 0 {
		var ps []string
		for p := range prefixes {
			ps = append(ps, p+"embed_tokens.weight")
		}
		sort.Strings(ps)
		return []string{fmt.Sprintf("the weights have no token embedding (%s), which the model needs", strings.Join(ps, " or "))}
	}
	sort.Strings(text)
	var out []string
	for _, p := range text {
		if names[p+"norm.weight"] == "" {
			out = append(out, fmt.Sprintf("the weights have no final norm %snorm.weight, which the model needs", p))
		}
	}
	return out
}
