package kernels_test

// This is an external test package: hark/mlx/mlxtest imports hark/mlx,
// which imports this package, so an in-package test may not import it.

import (
	"math"
	"slices"
	"strings"
	"testing"

	"hark/mlx/kernels"
	"hark/mlx/mlxtest"
	"hark/mlx/safetensors"
)

// mlxTensor is one quantized tensor of the MLX checkpoint.
type mlxTensor struct {
	name           string
	rows, cols     int
	packed         []uint32
	scales, biases []float32
}

const mlxBits, mlxGroup = 4, 32

func loadMLXQuantized(t *testing.T) []mlxTensor {
	t.Helper()
	s, err := safetensors.OpenIndex(mlxtest.Assets(t, "models", "stories260K-4bit-g32"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []mlxTensor
	for _, name := range s.Names() {
		base, ok := strings.CutSuffix(name, ".scales")
		if !ok {
			continue
		}
		info, err := s.Tensor(base + ".weight")
		if err != nil {
			t.Fatal(err)
		}
		q := mlxTensor{name: base, rows: info.Shape[0], cols: info.Shape[1] * 32 / mlxBits}
		if q.packed, err = s.Uint32s(base + ".weight"); err != nil {
			t.Fatal(err)
		}
		if q.scales, err = s.Float32s(base + ".scales"); err != nil {
			t.Fatal(err)
		}
		if q.biases, err = s.Float32s(base + ".biases"); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	if len(out) != 31 {
		t.Fatalf("found %d quantized tensors, want 31 (embedding + 6 per layer × 5)", len(out))
	}
	return out
}

// TestRealMLXQuantize proves Quantize == mlx.core.quantize: quantizing the
// original float32 weights (the HF snapshot MLX started from) reproduces
// MLX's packed words, scales and biases bit for bit, for every tensor.
func TestRealMLXQuantize(t *testing.T) {
	hf, err := safetensors.Open(mlxtest.Assets(t, "models", "stories260K", "hf", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	for _, q := range loadMLXQuantized(t) {
		orig, err := hf.Float32s(q.name + ".weight")
		if err != nil {
			t.Fatal(err)
		}
		p, s, b, err := kernels.Quantize(orig, q.rows, q.cols, mlxGroup, mlxBits)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p, q.packed) || !bitsEqual(s, q.scales) || !bitsEqual(b, q.biases) {
			t.Errorf("%s: Quantize differs from MLX's output", q.name)
		}
	}
}

// TestRealMLXDequantize proves Dequantize == scale*q + bias with two
// float32 roundings on MLX's own data, and checks what re-quantizing the
// dequantized weights gives.
//
// Re-quantizing is NOT idempotent under MLX's algorithm: when rounding q0
// shrank a group's code range (its largest stored code is below 2^bits-1),
// the dequantized group spans fewer steps and the scale is chosen afresh.
// Groups whose codes span the full range must round-trip exactly; the rest
// must still reproduce every dequantized value within one step.
func TestRealMLXDequantize(t *testing.T) {
	full, partial := 0, 0
	for _, q := range loadMLXQuantized(t) {
		deq := make([]float32, q.rows*q.cols)
		if err := kernels.Dequantize(q.packed, q.scales, q.biases, q.rows, q.cols, mlxGroup, mlxBits, deq); err != nil {
			t.Fatal(err)
		}
		wpr := q.cols * mlxBits / 32
		for i, v := range deq {
			r, c := i/q.cols, i%q.cols
			code := codeAt(q.packed, mlxBits, wpr, r, c)
			g := r*(q.cols/mlxGroup) + c/mlxGroup
			if want := float32(q.scales[g]*float32(code)) + q.biases[g]; math.Float32bits(v) != math.Float32bits(want) {
				t.Fatalf("%s: deq[%d] = %v, want %v", q.name, i, v, want)
			}
		}
		p2, s2, b2, err := kernels.Quantize(deq, q.rows, q.cols, mlxGroup, mlxBits)
		if err != nil {
			t.Fatal(err)
		}
		deq2 := make([]float32, len(deq))
		_ = kernels.Dequantize(p2, s2, b2, q.rows, q.cols, mlxGroup, mlxBits, deq2)
		for g := range q.scales {
			r, c0 := g/(q.cols/mlxGroup), (g%(q.cols/mlxGroup))*mlxGroup
			maxCode := 0
			for c := c0; c < c0+mlxGroup; c++ {
				maxCode = max(maxCode, codeAt(q.packed, mlxBits, wpr, r, c))
			}
			same := s2[g] == q.scales[g] && b2[g] == q.biases[g]
			for c := c0; c < c0+mlxGroup; c++ {
				same = same && codeAt(p2, mlxBits, wpr, r, c) == codeAt(q.packed, mlxBits, wpr, r, c)
				if d := math.Abs(float64(deq2[r*q.cols+c] - deq[r*q.cols+c])); d > math.Abs(float64(q.scales[g]))*1.0001 {
					t.Fatalf("%s group %d: re-quantized value off by %g, more than a step", q.name, g, d)
				}
			}
			if maxCode == 1<<mlxBits-1 {
				full++
				if !same {
					t.Errorf("%s group %d: full-range group did not round-trip", q.name, g)
				}
			} else {
				partial++
			}
		}
	}
	t.Logf("%d full-range groups round-tripped exactly; %d groups with a shrunken code range", full, partial)
}

// codeAt reads code j of row r bit by bit: value j sits at bits
// [j*bits, (j+1)*bits) of the row's little-endian word stream.
func codeAt(words []uint32, bits, rowWords, r, j int) int {
	v := 0
	for b := 0; b < bits; b++ {
		pos := r*rowWords*32 + j*bits + b
		v |= int(words[pos/32]>>uint(pos%32)&1) << b
	}
	return v
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
