package mlx

import "fmt"

// Conv1d is MLX's conv1d: x is [N, L, Cin] (channels last), w is
// [Cout, K, Cin]; stride, padding (zeros on both ends) and dilation as in
// PyTorch. The result is [N, Lout, Cout] with
// Lout = (L + 2*padding - dilation*(K-1) - 1)/stride + 1, in the promoted
// float dtype, accumulated in float32. Groups are not supported.
func Conv1d(x, w *Array, stride, padding, dilation int) *Array {
	be := backendOf("Conv1d", x, w)
	if len(x.shape) != 3 || len(w.shape) != 3 {
		panic(fmt.Sprintf("mlx.Conv1d: x %v must be [N,L,Cin] and w %v [Cout,K,Cin]", x.shape, w.shape))
	}
	if x.shape[2] != w.shape[2] {
		panic(fmt.Sprintf("mlx.Conv1d: channels differ: x %v, w %v (groups are not supported)", x.shape, w.shape))
	}
	if stride < 1 || dilation < 1 || padding < 0 {
		panic(fmt.Sprintf("mlx.Conv1d: stride %d, padding %d, dilation %d", stride, padding, dilation))
	}
	dt := PromoteTypes(x.dtype, w.dtype)
	if !dt.IsFloat() {
		panic("mlx.Conv1d: inputs must be floating point")
	}
	span := dilation*(w.shape[1]-1) + 1
	lout := (x.shape[1]+2*padding-span)/stride + 1
	if x.shape[1]+2*padding < span {
		lout = 0
	}
	out := newArray(be, dt, []int{x.shape[0], lout, w.shape[0]})
	be.Conv1d(x, w, stride, padding, dilation, out)
	return out
}
