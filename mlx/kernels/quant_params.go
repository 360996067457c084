package kernels

import "fmt"

// ValidBits and ValidGroupSizes are the affine quantization settings MLX
// supports; anything else is rejected before touching memory.
var (
	ValidBits       = []int{2, 3, 4, 5, 6, 8}
	ValidGroupSizes = []int{32, 64, 128}
)

// PackedCols is the number of uint32 words holding one quantized row of cols
// values at the given width. cols is a multiple of the group size (>= 32),
// so a row always fills whole words, even for 3/5/6-bit values.
func PackedCols(cols, bits int) int { return cols * bits / 32 }

// checkQuantParams validates bits, group size and the [rows, cols] shape
// shared by every quantized kernel.
func checkQuantParams(rows, cols, groupSize, bits int) error {
	okBits := false
	for _, b := range ValidBits {
		okBits = okBits || b == bits
	}
	if !okBits {
		return fmt.Errorf("kernels: unsupported bits %d (want 2, 3, 4, 5, 6 or 8)", bits)
	}
	okGroup := false
	for _, g := range ValidGroupSizes {
		okGroup = okGroup || g == groupSize
	}
	if !okGroup {
		return fmt.Errorf("kernels: unsupported group size %d (want 32, 64 or 128)", groupSize)
	}
	if rows < 0 || cols < 0 {
		return fmt.Errorf("kernels: negative shape [%d, %d]", rows, cols)
	}
	if cols%groupSize != 0 {
		return fmt.Errorf("kernels: %d columns are not a multiple of group size %d", cols, groupSize)
	}
	return nil
}

// checkQuantBuffers validates the lengths of packed weights and per-group
// scales/biases for a quantized [rows, cols] matrix.
func checkQuantBuffers(packed []uint32, scales, biases []float32, rows, cols, groupSize, bits int) error {
	if want := rows * PackedCols(cols, bits); len(packed) < want {
		return fmt.Errorf("kernels: packed weights have %d words, want %d for [%d, %d] at %d bits", len(packed), want, rows, cols, bits)
	}
	groups := rows * (cols / groupSize)
	if len(scales) < groups || len(biases) < groups {
		return fmt.Errorf("kernels: %d scales / %d biases, want %d groups for [%d, %d] group size %d", len(scales), len(biases), groups, rows, cols, groupSize)
	}
	return nil
}
