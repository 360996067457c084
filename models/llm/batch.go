package llm

import "hark/models/nn"

// BatchDecoder is a model whose decode steps can run several independent
// sequences at once, one token per row, in the caches BatchCaches returns:
// its attention rotates each row at the row's own position
// (nn.RoPE.ForwardFor) and lets the cache attend row by row
// (nn.Attender, AttendDecode). Families not listed keep one sequence per forward pass
// (recurrent state, MLA latents, or attention code that has not been
// taught per-row positions: qwen3_5, deepseek_v2, glm4_moe_lite, gemma4,
// gpt-oss).
type BatchDecoder interface {
	BatchCaches() []nn.Cache
}

// BatchCaches is one batch cache per layer (llama, qwen2, qwen3, mistral,
// phi3 and the MoE variants built on the same attention).
func (m *llama) BatchCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i, l := range m.layers {
		cs[i] = nn.NewBatchCache(l.attn.window)
	}
	return cs
}

// BatchCaches is one batch cache per layer, with the sliding window on
// the local layers.
func (m *gemma3) BatchCaches() []nn.Cache {
	cs := make([]nn.Cache, len(m.layers))
	for i, l := range m.layers {
		cs[i] = nn.NewBatchCache(l.attn.window)
	}
	return cs
}
