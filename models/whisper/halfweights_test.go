package whisper

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"hark/mlx"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// TestF16WeightsStayF16: Hugging Face ships Whisper in float16, and the
// loader holds its matrices (projections, embeddings, conv kernels) in
// 16 bits, widening them inside the kernels (issue 19). The f16 model's
// encoder output and logits equal, to float32 rounding, those of the same
// values stored as float32.
func TestF16WeightsStayF16(t *testing.T) {
	mlxtest.NoLeaks(t)
	src, err := safetensors.Open(filepath.Join(goldenDir(t), "model", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var half, wide []safetensors.Tensor
	for _, n := range src.Names() {
		info, _ := src.Tensor(n)
		if info.DType != safetensors.F32 {
			t.Fatalf("golden tensor %s is %s, the test expects float32", n, info.DType)
		}
		data, err := src.Float32s(n)
		if err != nil {
			t.Fatal(err)
		}
		f := mlx.FromSlice(data, info.Shape...)
		h := mlx.AsType(f, mlx.Float16)
		raw := make([]byte, 2*h.Size())
		for i, b := range h.Bits() {
			binary.LittleEndian.PutUint16(raw[2*i:], b)
		}
		back := mlx.AsType(h, mlx.Float32) // the f16 values, exactly, in float32
		half = append(half, safetensors.Tensor{Name: n, DType: safetensors.F16, Shape: info.Shape, Data: raw})
		wide = append(wide, safetensors.Tensor{Name: n, DType: safetensors.F32, Shape: info.Shape, Data: safetensors.Float32Bytes(back.Float32s())})
		mlx.Free(f, h, back)
	}
	dirs := map[string][]safetensors.Tensor{t.TempDir(): half, t.TempDir(): wide}
	for dir, ts := range dirs {
		if err := safetensors.Write(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := os.ReadFile(filepath.Join(goldenDir(t), "model", "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var hdir, wdir string
	for dir, ts := range dirs {
		if ts[0].DType == safetensors.F16 {
			hdir = dir
		} else {
			wdir = dir
		}
	}

	m, err := Load(hdir)
	if err != nil {
		t.Fatal(err)
	}
	matrices := 0
	for _, a := range m.owned {
		if a.DType() == mlx.Float32 && a.Ndim() >= 2 && a != m.encPos {
			t.Errorf("a %v matrix is held as float32, want float16 as in the file", a.Shape())
		}
		if a.DType() == mlx.Float16 {
			matrices++
		}
	}
	m.Close()
	if matrices == 0 {
		t.Fatal("no matrix is held in float16")
	}
	encH, logitsH, _ := forwardAll(t, hdir)
	encW, logitsW, _ := forwardAll(t, wdir)
	assertClose(t, "f16 encoder", encH, encW, 1e-4, 1e-4)
	assertClose(t, "f16 logits", logitsH, logitsW, 1e-4, 1e-4)
}
