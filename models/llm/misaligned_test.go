package llm_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
	"hark/models/llm"
	"hark/models/llm/llmtest"
)

// A 4-bit checkpoint as mlx-lm writes it (header unpadded, so every tensor
// may start at any byte; scales and biases in bfloat16 or float16) loads
// into the same model as the aligned float32-scaled checkpoint of the
// same values: the same logits bit for bit, the same packed weights. The
// loader packs its matrices from the file's bytes, copying none of them
// first (only the float tensors the model holds as they are).
func TestMisalignedCheckpointLoadsAsAligned(t *testing.T) {
	mlxtest.NoLeaks(t)
	// Widths of whole 128-value blocks, so the packed layout applies where
	// the CPU has its kernel; elsewhere the same checkpoints load copied.
	shape := llmtest.Shape{Hidden: 128, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Intermediate: 256, Vocab: 384}
	src := t.TempDir()
	if err := llmtest.Llama(shape, "qwen2", true).Write(src, 9, llmtest.Quant{Bits: 4, GroupSize: 64}); err != nil {
		t.Fatal(err)
	}
	ids := randomTokens(12, shape.Vocab)
	for _, c := range []struct {
		name     string
		scales   safetensors.DType
		misalign int64 // data section offset mod 4
	}{
		{"f32-offset-1", safetensors.F32, 1},
		{"f32-offset-2", safetensors.F32, 2},
		{"bf16-offset-3", safetensors.BF16, 3},
		{"f16-offset-1", safetensors.F16, 1},
		{"bf16-offset-2", safetensors.BF16, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			aligned, odd := filepath.Join(t.TempDir(), "aligned"), filepath.Join(t.TempDir(), "odd")
			rewriteCheckpoint(t, src, aligned, c.scales, false, 0)
			rewriteCheckpoint(t, src, odd, c.scales, true, c.misalign)
			if n := misalignedWords(t, odd); n == 0 {
				t.Fatal("no uint32 tensor of the rewritten checkpoint is misaligned")
			}
			want, _ := openCounting(t, aligned)
			got, copied := openCounting(t, odd)
			if d := maxDiff(run(got, ids), run(want, ids)); d != 0 {
				t.Errorf("misaligned checkpoint's logits differ from the aligned one's by %g", d)
			}
			if got.Info().PackedBytes != want.Info().PackedBytes || got.Info().WeightBytes != want.Info().WeightBytes {
				t.Errorf("misaligned: %+v, aligned: %+v", got.Info(), want.Info())
			}
			floats := floatTensorBytes(t, odd)
			if got.Info().PackedBytes > 0 && copied != floats {
				t.Errorf("the loader copied %d bytes of the checkpoint, want only the %d of its float tensors", copied, floats)
			}
		})
	}
}

// openCounting loads dir and says how many bytes of its checkpoint the
// loader copied (nn.Weights.CopiedBytes).
func openCounting(t *testing.T, dir string) (llm.Model, int64) {
	m, w := openWeights(t, dir, nil)
	return m, w.CopiedBytes()
}

// misalignedWords counts the uint32 tensors of dir's checkpoint whose file
// offset is not a multiple of 4.
func misalignedWords(t *testing.T, dir string) int {
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for _, name := range f.Names() {
		if info, err := f.Tensor(name); err == nil && info.DType == safetensors.U32 && info.Offset%4 != 0 {
			n++
		}
	}
	return n
}

// floatTensorBytes counts the bytes of dir's tensors that are neither the
// codes, scales nor biases of a quantized matrix.
func floatTensorBytes(t *testing.T, dir string) int64 {
	set, err := safetensors.OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	var n int64
	for _, name := range set.Names() {
		info, err := set.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		base := name[:strings.LastIndexByte(name, '.')]
		if _, err := set.Tensor(base + ".scales"); err == nil && !strings.HasSuffix(name, ".bias") {
			continue
		}
		n += info.Size
	}
	return n
}

// rewriteCheckpoint copies the model in src to dst with its quantized
// matrices' scales and biases rounded to dtype scales, stored in that
// dtype (odd) or widened back to float32 (not odd: the same values as
// the reference). odd also writes the header unpadded, as mlx-lm does,
// and pads it so that the data section starts at misalign mod 4, which
// puts uint32 tensors at offsets no uint32 may be read from.
func rewriteCheckpoint(t *testing.T, src, dst string, scales safetensors.DType, odd bool, misalign int64) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".safetensors") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts []safetensors.Tensor
	for _, name := range f.Names() {
		info, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		dt := info.DType
		if (strings.HasSuffix(name, ".scales") || strings.HasSuffix(name, ".biases")) && dt == safetensors.F32 && scales != safetensors.F32 {
			data, dt = roundScales(data, scales, odd)
		}
		ts = append(ts, safetensors.Tensor{Name: name, DType: dt, Shape: info.Shape, Data: data})
	}
	path := filepath.Join(dst, "model.safetensors")
	if !odd {
		if err := safetensors.Write(path, ts, nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	// The header's length moves with the metadata: lengthen it until the
	// data starts where it should.
	for pad := range 8 {
		if err := safetensors.WriteWith(path, ts, map[string]string{"pad": strings.Repeat("x", pad)}, safetensors.WriteOptions{Unpadded: true}); err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 8)
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fh.Read(head)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if (8+int64(binary.LittleEndian.Uint64(head)))%4 == misalign {
			return
		}
	}
	t.Fatalf("no metadata padding puts the data at %d mod 4", misalign)
}

// roundScales rounds little-endian float32 values to dt (BF16 or F16),
// giving them in dt (stored) or widened back to float32.
func roundScales(data []byte, dt safetensors.DType, stored bool) ([]byte, safetensors.DType) {
	n := len(data) / 4
	out := make([]byte, 0, 4*n)
	for i := range n {
		v := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		var h uint16
		var wide float32
		if dt == safetensors.BF16 {
			h = mlx.F32ToBF16(v)
			wide = mlx.BF16ToF32(h)
		} else {
			h = mlx.F32ToF16(v)
			wide = mlx.F16ToF32(h)
		}
		if stored {
			out = binary.LittleEndian.AppendUint16(out, h)
		} else {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(wide))
		}
	}
	if stored {
		return out, dt
	}
	return out, safetensors.F32
}
