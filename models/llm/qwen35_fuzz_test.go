package llm

import (
	"encoding/json"
	"testing"
)

// qwen35Seed is a Qwen3.5-MoE release-style config (the shape of the
// golden's, written out here so the seeds do not depend on ../shared).
const qwen35Seed = `{"architectures":["Qwen3_5MoeForConditionalGeneration"],"model_type":"qwen3_5_moe","tie_word_embeddings":false,
"text_config":{"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":32,
"vocab_size":1024,"rms_norm_eps":1e-6,"attn_output_gate":true,"full_attention_interval":4,
"layer_types":["linear_attention","linear_attention","linear_attention","full_attention"],
"linear_conv_kernel_dim":4,"linear_key_head_dim":16,"linear_num_key_heads":2,"linear_num_value_heads":4,"linear_value_head_dim":16,
"max_position_embeddings":262144,"mlp_only_layers":[],"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":32,
"shared_expert_intermediate_size":32,"rope_parameters":{"mrope_interleaved":true,"mrope_section":[2,1,1],
"partial_rotary_factor":0.25,"rope_theta":10000000,"rope_type":"default"}}}`

// The config reader takes untrusted JSON: it must never panic, stay
// bounded in memory whatever the numbers say, and whatever it accepts
// must be a layout the graph can build.
func FuzzQwen35Config(f *testing.F) {
	f.Add([]byte(qwen35Seed), true)
	f.Add([]byte(qwen35Seed), false)
	f.Add([]byte(`{"text_config":{"hidden_size":8,"num_hidden_layers":1000000000,"num_attention_heads":1,"vocab_size":4,
"linear_key_head_dim":1,"linear_num_key_heads":1,"linear_num_value_heads":1,"linear_value_head_dim":1,"full_attention_interval":2,"intermediate_size":8}}`), false)
	f.Add([]byte(`{"hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"head_dim":4,"vocab_size":4,"intermediate_size":8,
"layer_types":["full_attention","linear_attention"],"linear_key_head_dim":2,"linear_num_key_heads":1,"linear_num_value_heads":2,
"linear_value_head_dim":2,"partial_rotary_factor":0.5,"rope_parameters":{"rope_type":"mrope","mrope_section":[1,0,0]}}`), false)
	f.Fuzz(func(t *testing.T, data []byte, moe bool) {
		var raw map[string]any
		if json.Unmarshal(data, &raw) != nil {
			return
		}
		c, err := qwen35ConfigOf(raw, moe)
		if err != nil {
			return
		}
		if len(c.linear) != c.Layers || c.Layers > maxQwen35Layers || c.rotaryDims <= 0 || c.rotaryDims%2 != 0 || c.rotaryDims > c.HeadDim ||
			c.KVHeads <= 0 || c.Heads%c.KVHeads != 0 || c.LinVHeads%c.LinKHeads != 0 || c.ConvKernel < 1 {
			t.Fatalf("accepted an unbuildable config: %+v", c)
		}
		if moe && (c.TopK < 1 || c.TopK > c.Experts || c.MoEInter <= 0) {
			t.Fatalf("accepted a bad router: %+v", c)
		}
	})
}
