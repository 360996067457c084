package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
)

// The stats of a generation say what each position of context costs in
// the cache: for DeepSeek's latent (MLA) cache, kv_lora_rank + rope
// floats a layer, next to what a cache of full K and V heads would take;
// for a GQA model (qwen3), 2*kv_heads*head_dim floats a layer and no
// comparison, since that is what it holds. Both are computed here from
// config.json.
func TestChatStatsCacheBytesPerToken(t *testing.T) {
	mlxtest.NoLeaks(t)
	root := mlxtest.Assets(t, "families")
	for _, v := range []string{"deepseek_v2", "qwen3-a"} {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(root, v, "hf")
			var c struct {
				Layers  int64 `json:"num_hidden_layers"`
				Heads   int64 `json:"num_attention_heads"`
				KVHeads int64 `json:"num_key_value_heads"`
				HeadDim int64 `json:"head_dim"`
				KVLora  int64 `json:"kv_lora_rank"`
				Rope    int64 `json:"qk_rope_head_dim"`
				Nope    int64 `json:"qk_nope_head_dim"`
				V       int64 `json:"v_head_dim"`
			}
			readJSON(t, filepath.Join(dir, "config.json"), &c)
			want, wantGQA := c.Layers*2*c.KVHeads*c.HeadDim*4, int64(0)
			if c.KVLora > 0 {
				want, wantGQA = c.Layers*(c.KVLora+c.Rope)*4, c.Layers*c.Heads*(c.Nope+c.Rope+c.V)*4
			}
			out, errOut, code := runChatCLI(t, "", "chat", "--model", dir, "--raw", "-p", "Once upon a time", "--temp", "0", "--max-tokens", "3", "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Stats struct {
					PerToken    int64 `json:"kv_cache_bytes_per_token"`
					PerTokenGQA int64 `json:"kv_cache_bytes_per_token_gqa"`
					Bytes       int64 `json:"kv_cache_bytes"`
				} `json:"stats"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			st := res.Stats
			if st.PerToken != want || st.PerTokenGQA != wantGQA || st.Bytes < want {
				t.Errorf("cache bytes per token %d (GQA %d), %d in all; want %d (GQA %d)", st.PerToken, st.PerTokenGQA, st.Bytes, want, wantGQA)
			}
			t.Logf("%s: %d cache bytes per token against %d for full K/V heads", v, st.PerToken, st.PerTokenGQA)
		})
	}
}
