package llm

import (
	"math"

	"hark/mlx"
	"hark/models/nn"
)

// Gemma 4's per-layer embeddings (E2B, E4B; hidden_size_per_layer_input
// P > 0), as transformers' Gemma4TextModel computes them. Besides the main
// embedding, every token gets a P-vector per layer:
//
//	ids  = the tokens (those past vocab_size_per_layer_input read row 0)
//	tok  = embed_tokens_per_layer(ids) * sqrt(P)            [B, T, L, P]
//	ctx  = norm_P(per_layer_model_projection(e) / sqrt(hidden))
//	       with e the scaled main embedding                 [B, T, L, P]
//	in_l = (ctx + tok)[:, :, l] / sqrt(2)
//
// and layer l, after its MLP, adds
//
//	post_per_layer_input_norm(per_layer_projection(gelu(per_layer_input_gate(h)) * in_l))
//
// to the stream, before its layer_scalar.
type gemma4PLE struct {
	embed      *nn.Embedding // [vocab_size_per_layer_input, L*P]
	embedScale float64
	proj       nn.Layer // hidden -> L*P
	norm       *nn.RMSNorm
	layers     int
	dim        int // P
	vocab      int // vocab_size_per_layer_input
	mainVocab  int
}

// gemma4PLELayer is one layer's part: P-wide gate, projection back to the
// hidden size, and its norm.
type gemma4PLELayer struct {
	gate, proj nn.Layer
	norm       *nn.RMSNorm
}

func newGemma4PLE(w *nn.Weights, c *gemma4Cfg, pre string) *gemma4PLE {
	if c.PerLayer <= 0 {
		return nil
	}
	return &gemma4PLE{
		embed: w.Embedding(pre+"embed_tokens_per_layer", c.VocabPL, c.Layers*c.PerLayer),
		// rounded to bfloat16 like the main embedding's scale
		embedScale: float64(mlx.BF16ToF32(mlx.F32ToBF16(float32(math.Sqrt(float64(c.PerLayer)))))),
		proj:       w.Linear(pre+"per_layer_model_projection", c.Hidden, c.Layers*c.PerLayer, false),
		norm:       w.RMSNorm(pre+"per_layer_projection_norm", c.PerLayer, c.Eps, false),
		layers:     c.Layers, dim: c.PerLayer, vocab: c.VocabPL, mainVocab: c.Vocab,
	}
}

func newGemma4PLELayer(w *nn.Weights, c *gemma4Cfg, p string) *gemma4PLELayer {
	if c.PerLayer <= 0 {
		return nil
	}
	return &gemma4PLELayer{
		gate: w.Linear(p+"per_layer_input_gate", c.Hidden, c.PerLayer, false),
		proj: w.Linear(p+"per_layer_projection", c.PerLayer, c.Hidden, false),
		norm: w.RMSNorm(p+"post_per_layer_input_norm", c.Hidden, c.Eps, false),
	}
}

// inputs returns every layer's input [B, T, L, P] for tokens [B, T] whose
// scaled main embedding is e [B, T, hidden].
func (p *gemma4PLE) inputs(tokens, e *mlx.Array) *mlx.Array {
	b, t := tokens.Dim(0), tokens.Dim(1)
	ids := tokens
	if p.vocab < p.mainVocab {
		ids = mlx.Where(mlx.Less(tokens, mlx.Scalar(float64(p.vocab), tokens.DType())), tokens, mlx.Scalar(0, tokens.DType()))
	}
	tok := mlx.MulScalar(mlx.Reshape(p.embed.Forward(ids), b, t, p.layers, p.dim), p.embedScale)
	ctx := mlx.MulScalar(p.proj.Forward(e), 1/math.Sqrt(float64(e.Dim(2))))
	ctx = p.norm.Forward(mlx.Reshape(ctx, b, t, p.layers, p.dim))
	return mlx.MulScalar(mlx.Add(ctx, tok), 1/math.Sqrt2)
}

// at is layer i's slice [B, T, P] of inputs.
func (p *gemma4PLE) at(inputs *mlx.Array, i int) *mlx.Array {
	return mlx.Squeeze(mlx.SliceAxis(inputs, 2, i, i+1), 2)
}

// forward is what the layer adds to the stream h given its input in.
func (l *gemma4PLELayer) forward(h, in *mlx.Array) *mlx.Array {
	return l.norm.Forward(l.proj.Forward(geluGLU(l.gate.Forward(h), in)))
}
