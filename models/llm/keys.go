package llm

import (
	"fmt"
	"sort"
	"strings"
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
	return fmt.Errorf("config.json has keys this model's graph does not understand: %s", strings.Join(bad, ", "))
}

// llamaKeys are the keys llamaConfig reads.
var llamaKeys = []string{
	"hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads", "num_key_value_heads",
	"head_dim", "vocab_size", "rms_norm_eps", "rope_theta", "rope_traditional", "rope_scaling", "rope_parameters",
	"max_position_embeddings", "attention_bias", "mlp_bias", "hidden_act",
}
