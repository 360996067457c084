package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackBitOrder pins MLX's bit layout for every width with a hand-made
// pattern: code j = j mod 2^bits, checked bit by bit against the stream
// model (value j at bits [j*bits, (j+1)*bits) of the row, LSB first).
func TestPackBitOrder(t *testing.T) {
	for _, bits := range ValidBits {
		cols := 64
		codes := make([]uint8, cols)
		for j := range codes {
			codes[j] = uint8((j*7 + 3) % (1 << bits))
		}
		dst := make([]uint32, PackedCols(cols, bits))
		packRow(codes, bits, dst)
		for j := range codes {
			if got := codeAt(dst, bits, 0, 0, j); got != int(codes[j]) {
				t.Fatalf("bits %d: code %d reads back %d, want %d", bits, j, got, codes[j])
			}
		}
		back := make([]uint8, cols)
		unpackRow(dst, bits, 0, back)
		for j := range codes {
			if back[j] != codes[j] {
				t.Fatalf("bits %d: unpackRow[%d] = %d, want %d", bits, j, back[j], codes[j])
			}
		}
	}
	// Concrete words, worked out by hand from MLX's byte packing.
	// 4-bit: codes 1,2,...,8 → nibbles from the low end.
	c4 := []uint8{1, 2, 3, 4, 5, 6, 7, 8}
	w4 := make([]uint32, 1)
	packRow(c4, 4, w4)
	if w4[0] != 0x87654321 {
		t.Errorf("4-bit word = %#x, want 0x87654321", w4[0])
	}
	// 3-bit: 8 codes of 7 then 8 of 0... first 24 bits all ones; MLX's
	// 3-byte packs are contiguous, so the 11th code straddles bits 30..32.
	c3 := make([]uint8, 32)
	c3[10] = 5 // 0b101: bits 30, 32 set
	w3 := make([]uint32, 3)
	packRow(c3, 3, w3)
	if w3[0] != 1<<30 || w3[1] != 1 || w3[2] != 0 {
		t.Errorf("3-bit straddle words = %#x, want [0x40000000 0x1 0]", w3)
	}
	// 6-bit: code 5 = 0b111111 at bits 30..35 → two top bits of word 0,
	// four low bits of word 1.
	c6 := make([]uint8, 32)
	c6[5] = 63
	w6 := make([]uint32, 6)
	packRow(c6, 6, w6)
	if w6[0] != 0xC0000000 || w6[1] != 0xF {
		t.Errorf("6-bit straddle words = %#x %#x, want 0xc0000000 0xf", w6[0], w6[1])
	}
	// 5-bit: code 6 at bits 30..34.
	c5 := make([]uint8, 32)
	c5[6] = 31
	w5 := make([]uint32, 5)
	packRow(c5, 5, w5)
	if w5[0] != 0xC0000000 || w5[1] != 0x7 {
		t.Errorf("5-bit straddle words = %#x %#x, want 0xc0000000 0x7", w5[0], w5[1])
	}
}

// TestQuantizeRules checks MLX's per-group rules on every width and group
// size: codes in range, the larger-magnitude extreme reproduced exactly,
// every value within two steps (half a step
// plus far-end clipping), and Dequantize matching scale*q+bias
// evaluated independently from the raw bits.
func TestQuantizeRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, bits := range ValidBits {
		for _, gs := range ValidGroupSizes {
			t.Run(fmt.Sprintf("b%d_g%d", bits, gs), func(t *testing.T) {
				rows, cols := 5, 3*gs
				w := randSlice(r, rows*cols)
				// A constant group and an all-zero group exercise q0 == 0.
				for j := 0; j < gs; j++ {
					w[j] = 0
					w[cols+j] = 0.25
				}
				packed, scales, biases, err := Quantize(w, rows, cols, gs, bits)
				if err != nil {
					t.Fatal(err)
				}
				deq := make([]float32, rows*cols)
				if err := Dequantize(packed, scales, biases, rows, cols, gs, bits, deq); err != nil {
					t.Fatal(err)
				}
				rw := PackedCols(cols, bits)
				for rI := 0; rI < rows; rI++ {
					for g := 0; g < cols/gs; g++ {
						s, b := scales[rI*cols/gs+g], biases[rI*cols/gs+g]
						lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
						for j := g * gs; j < (g+1)*gs; j++ {
							lo, hi = min(lo, w[rI*cols+j]), max(hi, w[rI*cols+j])
						}
						edge := hi
						if math.Abs(float64(lo)) > math.Abs(float64(hi)) {
							edge = lo
						}
						foundEdge := edge == 0 && b == 0
						for j := g * gs; j < (g+1)*gs; j++ {
							q := codeAt(packed, bits, rw, rI, j)
							if q >= 1<<bits {
								t.Fatalf("code out of range")
							}
							want := float32(s*float32(q)) + b
							got := deq[rI*cols+j]
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("deq[%d,%d] = %v, want %v", rI, j, got, want)
							}
							if got == edge {
								foundEdge = true
							}
							// Half a step, plus what clipping can cost at the far end
							// when rounding q0 up shrank the step (< 1.5 steps).
							if d := math.Abs(float64(got - w[rI*cols+j])); d > 2*math.Abs(float64(s))+1e-6 {
								t.Fatalf("[%d,%d] error %g above two steps %g", rI, j, d, 2*s)
							}
						}
						if !foundEdge && hi != lo {
							t.Errorf("row %d group %d: edge %v not reproduced exactly (scale %v bias %v)", rI, g, edge, s, b)
						}
					}
				}
			})
		}
	}
}

func TestQuantizeErrors(t *testing.T) {
	w := make([]float32, 64)
	cases := []struct {
		rows, cols, gs, bits int
	}{{1, 64, 64, 7}, {1, 64, 48, 4}, {1, 60, 32, 4}, {2, 64, 64, 4}, {-1, 64, 64, 4}}
	for _, c := range cases {
		if _, _, _, err := Quantize(w, c.rows, c.cols, c.gs, c.bits); err == nil {
			t.Errorf("Quantize(%+v) succeeded, want error", c)
		}
	}
	if err := Dequantize(make([]uint32, 3), make([]float32, 1), make([]float32, 1), 1, 64, 64, 4, make([]float32, 64)); err == nil {
		t.Error("Dequantize with short packed buffer succeeded")
	}
}

func TestQuantizeEmpty(t *testing.T) {
	for _, shape := range [][2]int{{0, 64}, {3, 0}} {
		p, s, b, err := Quantize(nil, shape[0], shape[1], 64, 4)
		if err != nil || len(p)+len(s)+len(b) != 0 {
			t.Fatalf("Quantize %v: %v", shape, err)
		}
		if err := Dequantize(p, s, b, shape[0], shape[1], 64, 4, nil); err != nil {
			t.Fatalf("Dequantize %v: %v", shape, err)
		}
	}
	out := make([]float32, 6)
	for i := range out {
		out[i] = 1
	}
	if err := QMatmul(make([]float32, 0), 2, 0, 3, nil, nil, nil, 64, 4, true, out); err != nil {
		t.Fatal(err)
	}
	for _, v := range out {
		if v != 0 {
			t.Fatalf("k=0 product = %v, want zeros", out)
		}
	}
}
