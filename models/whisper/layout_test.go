package whisper

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// writeMLXCheckpoint converts golden/model into the mlx-community layout in
// dir: OpenAI names with mlp1/mlp2, channels-last conv weights, no stored
// encoder positions, OpenAI-style config.json and an alignment_heads
// tensor. With bits > 0 every Linear and the token embedding are
// quantized (scales stored as float16); with dequant the quantized values
// are stored back as dense float32 instead (the same function, unpacked).
func writeMLXCheckpoint(t *testing.T, dir string, bits int, dequant bool) {
	t.Helper()
	src, err := safetensors.Open(filepath.Join(goldenDir(t), "model", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []safetensors.Tensor
	f32 := func(name string, shape []int, data []float32) {
		out = append(out, safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: safetensors.Float32Bytes(data)})
	}
	for _, n := range src.Names() {
		c, ok := canonicalName(n)
		if !ok || c == "encoder.positional_embedding" {
			continue
		}
		info, _ := src.Tensor(n)
		data, err := src.Float32s(n)
		if err != nil {
			t.Fatal(err)
		}
		shape := info.Shape
		if strings.HasPrefix(c, "encoder.conv") && strings.HasSuffix(c, ".weight") {
			w := mlx.FromSlice(data, shape...)
			tw := mlx.Transpose(w, 0, 2, 1)
			data, shape = tw.Float32s(), tw.Shape()
			mlx.Free(w, tw)
		}
		quantize := bits > 0 && strings.HasSuffix(c, ".weight") && len(shape) == 2 && !strings.Contains(c, "positional")
		if !quantize {
			f32(c, shape, data)
			continue
		}
		w := mlx.FromSlice(data, shape...)
		wq, scales, biases, err := mlx.Quantize(w, 64, bits)
		if err != nil {
			t.Fatal(err)
		}
		prefix := strings.TrimSuffix(c, ".weight")
		if dequant {
			// the loader reads the float16 scales back as float32
			s16, b16 := mlx.AsType(scales, mlx.Float16), mlx.AsType(biases, mlx.Float16)
			s32, b32 := mlx.AsType(s16, mlx.Float32), mlx.AsType(b16, mlx.Float32)
			dq := mlx.Dequantize(wq, s32, b32, 64, bits)
			f32(c, shape, dq.Float32s())
			mlx.Free(dq, s16, b16, s32, b32)
		} else {
			out = append(out, safetensors.Tensor{Name: c, DType: safetensors.U32, Shape: wq.Shape(), Data: safetensors.Uint32Bytes(wq.Uint32s())})
			for _, p := range []struct {
				name string
				a    *mlx.Array
			}{{".scales", scales}, {".biases", biases}} {
				h := mlx.AsType(p.a, mlx.Float16)
				raw := make([]byte, 2*h.Size())
				for i, b := range h.Bits() {
					binary.LittleEndian.PutUint16(raw[2*i:], b)
				}
				out = append(out, safetensors.Tensor{Name: prefix + p.name, DType: safetensors.F16, Shape: h.Shape(), Data: raw})
				h.Free()
			}
		}
		mlx.Free(w, wq, scales, biases)
	}
	heads := make([]byte, 16*2)
	for i, v := range []int64{1, 0, 1, 3} { // [[1,0],[1,3]]
		binary.LittleEndian.PutUint64(heads[8*i:], uint64(v))
	}
	out = append(out, safetensors.Tensor{Name: "alignment_heads", DType: safetensors.I64, Shape: []int{2, 2}, Data: heads})
	if err := safetensors.Write(filepath.Join(dir, "weights.safetensors"), out, nil); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"n_mels": 80, "n_audio_ctx": 1500, "n_audio_state": 64, "n_audio_head": 4, "n_audio_layer": 2,
		"n_vocab": 51865, "n_text_ctx": 448, "n_text_state": 64, "n_text_head": 4, "n_text_layer": 2, "model_type": "whisper"}
	if bits > 0 && !dequant {
		cfg["quantization"] = map[string]any{"group_size": 64, "bits": bits}
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// forwardAll returns the encoder output and the logits of a 4-token
// prompt for model dir.
func forwardAll(t *testing.T, dir string) (enc, logits []float32, heads [][2]int) {
	t.Helper()
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := goldenMel(t)
	defer in.Free()
	audio, err := m.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	defer audio.Free()
	return audio.Float32s(), decodeLogits(t, m, audio, []int{50258, 50259, 50359, 50363}), m.Config.AlignmentHeads
}

func TestMLXCommunityLayout(t *testing.T) {
	mlxtest.NoLeaks(t)
	want := readNPY(t, filepath.Join(goldenDir(t), "model_io", "logits_sot_en_transcribe_notimestamps.npy"))
	wantEnc := readNPY(t, filepath.Join(goldenDir(t), "model_io", "encoder_output.npy"))
	dir := t.TempDir()
	writeMLXCheckpoint(t, dir, 0, false)
	enc, logits, heads := forwardAll(t, dir)
	// Only the recomputed sinusoids differ from the HF checkpoint (~1e-4).
	assertClose(t, "mlx encoder", enc, wantEnc.Data, 2e-3, 2e-3)
	assertClose(t, "mlx logits", logits, want.Data, 2e-3, 2e-3)
	if !slices.Equal(heads, [][2]int{{1, 0}, {1, 3}}) {
		t.Errorf("alignment heads %v", heads)
	}
}

func TestQuantizedCheckpoint(t *testing.T) {
	mlxtest.NoLeaks(t)
	// This holds the quantized kernels to float32 rounding of the exact
	// product, through both stacks: the exact-x kernels. The int8-x kernel
	// that prompt-sized batches take by default (1500 encoder positions)
	// moves each matmul by up to its rounding bound, which no fixed
	// tolerance through two layers would derive from; mlx's
	// TestQuantMatrixInt8Rows and kernels' TestPackedQ8Rows hold it to that
	// bound per matmul.
	t.Cleanup(mlx.ExactQuantizedX())
	for _, bits := range []int{4, 8} {
		q, d := t.TempDir(), t.TempDir()
		writeMLXCheckpoint(t, q, bits, false)
		writeMLXCheckpoint(t, d, bits, true)
		qEnc, qLogits, _ := forwardAll(t, q)
		dEnc, dLogits, _ := forwardAll(t, d)
		// Quantized kernels against the same weights unpacked to float32
		// (scales went through float16 in both).
		assertClose(t, "quantized encoder", qEnc, dEnc, 1e-4, 1e-4)
		assertClose(t, "quantized logits", qLogits, dLogits, 1e-4, 1e-4)
	}
	// A config whose bits disagree with the tensors is refused.
	dir := t.TempDir()
	writeMLXCheckpoint(t, dir, 4, false)
	cfg := `{"n_mels":80,"n_audio_ctx":1500,"n_audio_state":64,"n_audio_head":4,"n_audio_layer":2,"n_vocab":51865,"n_text_ctx":448,"n_text_state":64,"n_text_head":4,"n_text_layer":2,"quantization":{"group_size":64,"bits":8}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := Load(dir); err == nil {
		m.Close()
		t.Fatal("8-bit config over 4-bit tensors accepted")
	}
}
