package whisper

import (
	"regexp"
	"strings"
)

// Checkpoints name Whisper's tensors in one of three schemes:
//
//   - Hugging Face WhisperForConditionalGeneration:
//     model.encoder.layers.0.self_attn.q_proj.weight, ...fc1, embed_tokens;
//   - OpenAI's PyTorch module names: encoder.blocks.0.attn.query.weight,
//     ...mlp.0, decoder.token_embedding;
//   - mlx-community (mlx-examples' Whisper): OpenAI's names with mlp1/mlp2
//     instead of mlp.0/mlp.2, conv weights stored channels-last, and
//     quantized layers as weight (uint32) + scales + biases.
//
// canonicalName maps all of them onto the mlx-community names, which the
// graph uses. ok is false for tensors the graph does not read.
func canonicalName(name string) (string, bool) {
	if strings.HasPrefix(name, "model.") {
		return hfToCanonical(strings.TrimPrefix(name, "model."))
	}
	if name == "proj_out.weight" {
		return "", false // tied to the token embedding in every Whisper
	}
	n := strings.Replace(name, ".mlp.0.", ".mlp1.", 1)
	n = strings.Replace(n, ".mlp.2.", ".mlp2.", 1)
	if strings.HasPrefix(n, "encoder.") || strings.HasPrefix(n, "decoder.") {
		return n, true
	}
	return "", false
}

var hfLayer = regexp.MustCompile(`^(encoder|decoder)\.layers\.(\d+)\.(.+)$`)

var hfLayerParts = []struct{ from, to string }{
	{"self_attn.q_proj.", "attn.query."},
	{"self_attn.k_proj.", "attn.key."},
	{"self_attn.v_proj.", "attn.value."},
	{"self_attn.out_proj.", "attn.out."},
	{"self_attn_layer_norm.", "attn_ln."},
	{"encoder_attn.q_proj.", "cross_attn.query."},
	{"encoder_attn.k_proj.", "cross_attn.key."},
	{"encoder_attn.v_proj.", "cross_attn.value."},
	{"encoder_attn.out_proj.", "cross_attn.out."},
	{"encoder_attn_layer_norm.", "cross_attn_ln."},
	{"fc1.", "mlp1."},
	{"fc2.", "mlp2."},
	{"final_layer_norm.", "mlp_ln."},
}

func hfToCanonical(n string) (string, bool) {
	if m := hfLayer.FindStringSubmatch(n); m != nil {
		for _, p := range hfLayerParts {
			if rest, ok := strings.CutPrefix(m[3], p.from); ok {
				return m[1] + ".blocks." + m[2] + "." + p.to + rest, true
			}
		}
		return "", false
	}
	switch n {
	case "encoder.embed_positions.weight":
		return "encoder.positional_embedding", true
	case "decoder.embed_positions.weight":
		return "decoder.positional_embedding", true
	case "encoder.layer_norm.weight":
		return "encoder.ln_post.weight", true
	case "encoder.layer_norm.bias":
		return "encoder.ln_post.bias", true
	case "decoder.layer_norm.weight":
		return "decoder.ln.weight", true
	case "decoder.layer_norm.bias":
		return "decoder.ln.bias", true
	}
	if rest, ok := strings.CutPrefix(n, "decoder.embed_tokens."); ok {
		return "decoder.token_embedding." + rest, true
	}
	if strings.HasPrefix(n, "encoder.conv1.") || strings.HasPrefix(n, "encoder.conv2.") {
		return n, true
	}
	return "", false
}
