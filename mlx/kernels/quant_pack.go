package kernels

// MLX packs each quantized row as one little-endian bit stream: value j of a
// row occupies bits [j*bits, (j+1)*bits) counting from bit 0 of the row's
// first uint32 word. For 2/4/8 bits a value never crosses a word; for 3, 5
// and 6 bits MLX writes 8 (or 4) values per 3- or 5-byte pack, which is the
// same stream, so some values straddle two words. These helpers work on
// that stream directly.

// packRow writes the codes q (each < 1<<bits) of one row into dst, which
// must hold len(q)*bits/32 words; dst is overwritten, not OR-ed.
func packRow(q []uint8, bits int, dst []uint32) {
	clear(dst)
	for j, v := range q {
		pos := j * bits
		w, off := pos>>5, uint(pos&31)
		dst[w] |= uint32(v) << off
		if off+uint(bits) > 32 {
			// The high part of a straddling value starts the next word.
			dst[w+1] |= uint32(v) >> (32 - off)
		}
	}
}

// unpackRow reads n codes of one row starting at value index start.
func unpackRow(src []uint32, bits, start int, dst []uint8) {
	mask := uint64(1)<<uint(bits) - 1
	for j := range dst {
		pos := (start + j) * bits
		w, off := pos>>5, uint(pos&31)
		v := uint64(src[w]) >> off
		if off+uint(bits) > 32 {
			v |= uint64(src[w+1]) << (32 - off)
		}
		dst[j] = uint8(v & mask)
	}
}

// dequantGroup expands one group of codes with its scale and bias. The
// product is rounded to float32 before the add on purpose: MLX computes
// scale*q + bias as two roundings, and a fused multiply-add (which Go may
// emit on arm64 for a bare s*q+b) gives different bits.
func dequantGroup(src []uint32, bits, start int, scale, bias float32, codes []uint8, dst []float32) {
	unpackRow(src, bits, start, codes)
	for i, q := range codes {
		dst[i] = float32(scale*float32(q)) + bias
	}
}
