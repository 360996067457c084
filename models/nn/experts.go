package nn

import (
	"fmt"

	"hark/mlx"
)

// ExpertMatrix is one projection of every expert of a mixture-of-experts
// layer, stacked: [experts, out, in], dense or MLX-quantized. Apply
// multiplies each row by the matrix of the expert it was routed to through
// the gather-matmul, which reads only the experts used.
type ExpertMatrix struct {
	W                   *mlx.Array // dense [E, out, in]; nil when quantized
	Q, Scales, Biases   *mlx.Array // quantized [E, out, in*bits/32], [E, out, in/group]
	GroupSize, Bits     int
	experts, out, inDim int
}

// Apply computes x[lhs[i]] @ Wᵀ[rhs[i]] for x [A, 1, in]: [n, 1, out], n
// the length of rhs (lhs nil: row i). sorted says rhs is sorted.
func (m *ExpertMatrix) Apply(x, lhs, rhs *mlx.Array, sorted bool) *mlx.Array {
	if m.W != nil {
		return mlx.GatherMMT(x, m.W, lhs, rhs, sorted)
	}
	return mlx.GatherQMM(x, m.Q, m.Scales, m.Biases, lhs, rhs, true, m.GroupSize, m.Bits, sorted)
}

// Experts loads projection name ([out, in] per expert) of the e experts
// under prefix, in either layout checkpoints use: one tensor per expert,
// prefix.experts.N.name (Hugging Face's), or one stacked tensor
// prefix.switch_mlp.stacked ([E, out, in]; mlx-lm's, quantized or not).
// Per-expert tensors are stacked at load. When neither is there, the
// error names the tensors it looked for.
func (w *Weights) Experts(prefix, name, stacked string, e, in, out int) *ExpertMatrix {
	m := &ExpertMatrix{experts: e, out: out, inDim: in}
	fused := prefix + "switch_mlp." + stacked
	first := fmt.Sprintf("%sexperts.0.%s", prefix, name)
	switch {
	case w.names[fused+".weight"]:
		w.stackedExperts(m, fused)
	case w.names[first+".weight"]:
		w.perExpert(m, prefix, name)
	default:
		w.Failf("missing tensor %s.weight (one per expert) or %s.weight (stacked [%d, %d, %d])", first, fused, e, out, in)
	}
	return m
}

// stackedExperts loads an [E, out, in] tensor (with .scales/.biases when
// quantized).
func (w *Weights) stackedExperts(m *ExpertMatrix, path string) {
	if !w.names[path+".scales"] {
		m.W = w.expertArray(path+".weight", []int{m.experts, m.out, m.inDim}, 0, nil)
		return
	}
	wq, s, b, group, bits, ok := w.quantTensors(path, []int{m.experts}, m.out, m.inDim, true)
	if !ok {
		return // reported; a nil W and Q marks the matrix unusable
	}
	m.Q, m.Scales, m.Biases, m.GroupSize, m.Bits = wq, s, b, group, bits
}

// MXFP4Experts wraps released MXFP4 experts (GPT-OSS's name_blocks
// [E, out, in/32, 16] uint8 and name_scales [E, out, in/32] uint8) as
// an MXFP4 ExpertMatrix without converting them: the blocks' bytes are
// the packed words of mlx.Dequantize's MXFP4 mode.
func (w *Weights) MXFP4Experts(name string, e, in, out int) *ExpertMatrix {
	m := &ExpertMatrix{experts: e, out: out, inDim: in, GroupSize: mlx.MXFP4GroupSize, Bits: mlx.MXFP4Bits}
	if in%32 != 0 {
		w.Failf("%s_blocks: input size %d is not a multiple of MXFP4's 32-value blocks", name, in)
		w.used[name+"_blocks"], w.used[name+"_scales"] = true, true
		return m
	}
	if info, err := w.src.Tensor(name + "_blocks"); err == nil && info.DType != "U8" {
		w.Failf("tensor %s_blocks is %s, MXFP4 blocks are U8", name, info.DType)
		w.used[name+"_blocks"], w.used[name+"_scales"] = true, true
		return m
	}
	scales := w.expertArray(name+"_scales", []int{e, out, in / 32}, 0, nil)
	blocks := w.expertArray(name+"_blocks", []int{e, out, in / 32, 16}, mlx.Uint32, []int{e, out, in / 8})
	if blocks == nil || scales == nil {
		return m // reported
	}
	if scales.DType() != mlx.Uint8 {
		w.Failf("%s_scales must be uint8, got %v", name, scales.DType())
		return m
	}
	m.Q, m.Scales = blocks, scales
	return m
}

// perExpert loads prefix.experts.N.name for every N and stacks them. The
// experts must share one format: all dense, or all quantized alike.
func (w *Weights) perExpert(m *ExpertMatrix, prefix, name string) {
	var dense, qs, ss, bs []*mlx.Array
	for i := 0; i < m.experts; i++ {
		path := fmt.Sprintf("%sexperts.%d.%s", prefix, i, name)
		q, ok := w.quantized(path, m.out, m.inDim, false)
		if !ok {
			if a := w.Array(path+".weight", m.out, m.inDim); a != nil {
				dense = append(dense, a)
			}
			continue
		}
		if q.M == nil {
			continue // reported
		}
		wq, s, b, _ := q.M.MLX()
		if len(qs) > 0 && (q.M.GroupSize() != m.GroupSize || q.M.Bits() != m.Bits || (b == nil) != (bs[0] == nil)) {
			w.Failf("%s: %d-bit groups of %d, expert 0 has %d-bit groups of %d", path, q.M.Bits(), q.M.GroupSize(), m.Bits, m.GroupSize)
		}
		m.GroupSize, m.Bits = q.M.GroupSize(), q.M.Bits()
		qs, ss, bs = append(qs, wq), append(ss, s), append(bs, b)
	}
	switch {
	case len(dense) == m.experts:
		m.W = w.stack(dense)
	case len(qs) == m.experts:
		m.Q, m.Scales = w.stack(qs), w.stack(ss)
		if bs[0] != nil { // nil: mxfp4
			m.Biases = w.stack(bs)
		}
	case len(dense) > 0 && len(qs) > 0:
		w.Failf("%sexperts.*.%s: some experts are quantized and some are not", prefix, name)
	}
	// otherwise a missing or misshapen expert, already reported
}

// stack joins loaded arrays along a new first axis into a new loaded
// array, freeing the originals.
func (w *Weights) stack(xs []*mlx.Array) *mlx.Array {
	out := mlx.Stack(xs, 0)
	for _, x := range xs {
		w.untrack(x)
		x.Free()
	}
	w.track(out)
	return out
}
