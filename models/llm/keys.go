package llm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"hark/models/nn"
)

// commonKeys are config.json keys of every Hugging Face model that do not
// change the forward pass (training, generation and export metadata) or
// that the loader reads elsewhere (quantization, token ids).
var commonKeys = []string{
	"_name_or_path", "architectures", "model_type", "transformers_version", "torch_dtype", "dtype",
	"initializer_range", "use_cache", "attention_dropout", "hidden_dropout", "output_router_logits",
	"router_aux_loss_coef", "router_jitter_noise", "bos_token_id", "eos_token_id", "pad_token_id",
	"tie_word_embeddings", "quantization", "quantization_config", "auto_map", "pretraining_tp",
	"return_dict", "output_attentions", "output_hidden_states", "is_decoder", "tokenizer_class",
}

// checkKeys refuses a config with keys outside commonKeys and known: a key
// this graph does not read may change the model in a way it would get
// silently wrong, so the error names it.
func checkKeys(raw map[string]any, known ...string) error {
	return checkKeysAt("config.json", raw, known...)
}

// checkKeysAt is checkKeys for the object where sits in config.json
// ("config.json text_config").
func checkKeysAt(where string, raw map[string]any, known ...string) error {
	ok := map[string]bool{}
	for _, k := range append(append([]string(nil), commonKeys...), known...) {
		ok[k] = true
	}
	var bad []string
	for k := range raw {
		if !ok[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s has keys this model's graph does not understand: %s", where, strings.Join(bad, ", "))
}

// llamaKeys are the keys llamaConfig reads.
var llamaKeys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
	"head_dim", "vocab_size", "rms_norm_eps", "rope_theta", "rope_traditional", "rope_scaling", "rope_parameters",
	"max_position_embeddings", "attention_bias", "mlp_bias", "hidden_act", "layer_types",
}

// checkLayerTypes checks a config's layer_types list (key is where it
// sits, e.g. "text_config.layer_types"): one entry per layer, each a kind
// the graph builds. An entry it does not know (chunked_attention,
// linear_attention) would otherwise be run as some other kind of layer.
func checkLayerTypes(key string, types []string, layers int, known ...string) error {
	if len(types) != layers {
		return fmt.Errorf("config.json: %s has %d entries for %d layers", key, len(types), layers)
	}
	for i, t := range types {
		if !slices.Contains(known, t) {
			return fmt.Errorf("config.json: %s[%d] %q is not a layer kind this model's graph builds (%s)", key, i, t, strings.Join(known, ", "))
		}
	}
	return nil
}

// checkRopeKinds checks that a per-layer-type rope_parameters object (key
// is where it sits) has settings only for layer kinds the graph builds:
// settings for another kind mean the config describes layers we would run
// wrongly.
func checkRopeKinds(key string, params map[string]any, known ...string) error {
	for kind, v := range params {
		if _, nested := v.(map[string]any); !nested {
			continue // a flat rope_parameters: rope_type, rope_theta, ...
		}
		if !slices.Contains(known, kind) {
			return fmt.Errorf("config.json: %s.%s is for a layer kind this model's graph does not build (%s)", key, kind, strings.Join(known, ", "))
		}
	}
	return nil
}

// textPrefix returns which of prefixes the checkpoint keeps the text
// model under, found by its embedding table (tensor, e.g.
// "embed_tokens"). When none holds it, the error names every tensor it
// looked for, so a checkpoint in a layout Hark does not read says what
// was expected.
func textPrefix(w *nn.Weights, tensor string, prefixes ...string) (string, error) {
	var tried []string
	for _, p := range prefixes {
		if w.Has(p+tensor+".weight") || w.Has(p+tensor+".scales") {
			return p, nil
		}
		tried = append(tried, p+tensor+".weight")
	}
	return "", fmt.Errorf("missing tensor %s: the checkpoint is not in a layout this model's graph reads", strings.Join(tried, " or "))
}
