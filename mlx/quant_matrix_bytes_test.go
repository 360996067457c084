package mlx_test

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"hark/mlx"
)

// A matrix made from a checkpoint's bytes (misaligned codes, bfloat16
// scales and biases) is the matrix of the arrays those bytes hold, with
// the scales widened: packed from the bytes, copied into arrays (MLX), or
// fused with another part, it gives the same rows bit for bit and the
// same matmul.
func TestQuantMatrixBytes(t *testing.T) {
	leakFree(t)
	r := newRNG(75)
	const k, gs = 256, 64
	x := mlx.FromSlice(randSlice(r, 3*k, -1, 1), 3, k)
	defer x.Free()
	type part struct {
		src  mlx.QuantBytes
		want *mlx.QuantMatrix // from arrays of the same values
	}
	mk := func(n int) part {
		w := mlx.FromSlice(randSlice(r, n*k, -1, 1), n, k)
		defer w.Free()
		wq, s, b, err := mlx.Quantize(w, gs, 4)
		if err != nil {
			t.Fatal(err)
		}
		sb, sw := bf16Bytes(s.Float32s())
		bb, bw := bf16Bytes(b.Float32s())
		var codes []byte
		for _, v := range wq.Uint32s() {
			codes = binary.LittleEndian.AppendUint32(codes, v)
		}
		mlx.Free(s, b)
		return part{
			src:  mlx.QuantBytes{Weight: shifted(1, codes), Scales: shifted(3, sb), Biases: shifted(2, bb), ScaleType: mlx.BFloat16, Rows: n, Cols: k, GroupSize: gs, Bits: 4},
			want: mlx.NewQuantMatrix(wq, mlx.FromSlice(sw, n, k/gs), mlx.FromSlice(bw, n, k/gs), gs, 4),
		}
	}
	a, b := mk(36), mk(13)
	defer func() { mlx.Free(a.want.Arrays()...); mlx.Free(b.want.Arrays()...) }()
	// same compares got with want in want's layout: the packed and the MLX
	// layout's kernels may round a matmul differently.
	same := func(what string, got, want *mlx.QuantMatrix) {
		t.Helper()
		if got.Packed() {
			wq, s, b, _ := want.MLX()
			want = mlx.NewQuantMatrix(mlx.Copy(wq), mlx.Copy(s), mlx.Copy(b), gs, 4)
			mlx.Free(want.Pack()...)
			defer mlx.Free(want.Arrays()...)
		}
		gd, wd := got.Dequantize(), want.Dequantize()
		if !slices.Equal(gd.Float32s(), wd.Float32s()) {
			t.Errorf("%s: rows differ", what)
		}
		gm, wm := got.MatmulT(x), want.MatmulT(x)
		if !slices.Equal(gm.Float32s(), wm.Float32s()) {
			t.Errorf("%s: matmul differs", what)
		}
		mlx.Free(gd, wd, gm, wm)
	}
	for _, mode := range []string{"pack", "arrays"} {
		q, err := mlx.NewQuantMatrixBytes(a.src)
		if err != nil {
			t.Fatal(err)
		}
		if q == nil {
			t.Log("the backend does not pack this format from bytes")
			break
		}
		if !q.FromBytes() || q.Arrays() != nil {
			t.Fatalf("%s: a matrix made from bytes holds %v", mode, q.Arrays())
		}
		if mode == "pack" {
			if mlx.Free(q.Pack()...); !q.Packed() || q.FromBytes() {
				t.Fatalf("pack: not packed from the bytes: %v", q)
			}
		} else if wq, s, _, ok := q.MLX(); !ok || q.FromBytes() || wq.DType() != mlx.Uint32 || s.DType() != mlx.Float32 {
			t.Fatalf("arrays: MLX gave %v %v", wq, s)
		}
		same(mode, q, a.want)
		mlx.Free(q.Arrays()...)
	}
	qa, _ := mlx.NewQuantMatrixBytes(a.src)
	qb, _ := mlx.NewQuantMatrixBytes(b.src)
	if qa == nil || qb == nil {
		return
	}
	f := mlx.PackedQuantMatrices([]*mlx.QuantMatrix{qa, qb})
	if f == nil {
		t.Fatal("two parts in bytes did not pack as one")
	}
	defer mlx.Free(f.Arrays()...)
	wa, sa, ba, _ := a.want.MLX()
	wb, sb, bb, _ := b.want.MLX()
	joined := mlx.NewQuantMatrix(mlx.Concatenate([]*mlx.Array{wa, wb}, 0), mlx.Concatenate([]*mlx.Array{sa, sb}, 0), mlx.Concatenate([]*mlx.Array{ba, bb}, 0), gs, 4)
	defer mlx.Free(joined.Arrays()...)
	same("fused", f, joined)
	bad := a.src
	bad.Scales = bad.Scales[1:]
	if _, err := mlx.NewQuantMatrixBytes(bad); err == nil {
		t.Error("NewQuantMatrixBytes took scales one byte short")
	}
}

// bf16Bytes rounds vs to bfloat16: their bytes and the values they hold.
func bf16Bytes(vs []float32) ([]byte, []float32) {
	var out []byte
	held := make([]float32, len(vs))
	for i, v := range vs {
		h := mlx.F32ToBF16(v)
		out = binary.LittleEndian.AppendUint16(out, h)
		held[i] = math.Float32frombits(uint32(h) << 16)
	}
	return out, held
}

// shifted copies data to off bytes into a new buffer: that misalignment.
func shifted(off int, data []byte) []byte {
	buf := make([]byte, off+len(data))
	copy(buf[off:], data)
	return buf[off:]
}
