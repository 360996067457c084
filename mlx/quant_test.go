package mlx_test

import (
	"fmt"
	"math"
	"testing"

	"hark/mlx"
)

// MLX's documented packing: the codes of a row form one little-endian bit
// stream, code i occupying bits [i*bits, (i+1)*bits), stored in uint32 words
// (word w holds stream bits [32w, 32w+32), least significant first).
func refPack(codes []uint32, bits int) []uint32 {
	words := make([]uint32, len(codes)*bits/32)
	for i, c := range codes {
		for b := 0; b < bits; b++ {
			if c>>b&1 == 1 {
				pos := i*bits + b
				words[pos/32] |= 1 << (pos % 32)
			}
		}
	}
	return words
}

func refUnpack(words []uint32, n, bits int) []uint32 {
	codes := make([]uint32, n)
	for i := range codes {
		for b := 0; b < bits; b++ {
			pos := i*bits + b
			codes[i] |= (words[pos/32] >> (pos % 32) & 1) << b
		}
	}
	return codes
}

// refDequant applies w = s*q + b with the product rounded to float32 before
// the add (MLX's arithmetic; no fused multiply-add).
func refDequant(codes []uint32, scales, biases []float32, rows, cols, gs int) []float64 {
	out := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			g := r*(cols/gs) + c/gs
			prod := float32(scales[g] * float32(codes[r*cols+c]))
			out[r*cols+c] = float64(prod + biases[g])
		}
	}
	return out
}

var quantBits = []int{2, 3, 4, 5, 6, 8}
var quantGroups = []int{32, 64, 128}

func TestDequantizeBitOrder(t *testing.T) {
	leakFree(t)
	r := newRNG(70)
	for _, bits := range quantBits {
		for _, gs := range quantGroups {
			rows, cols := 3, 2*gs
			codes := make([]uint32, rows*cols)
			for i := range codes {
				codes[i] = uint32(r.IntN(1 << bits))
			}
			codes[0], codes[1] = 1<<bits-1, 1 // distinctive pattern at the start
			var packed []uint32
			for row := 0; row < rows; row++ {
				packed = append(packed, refPack(codes[row*cols:(row+1)*cols], bits)...)
			}
			ng := rows * cols / gs
			sc, bi := randSlice(r, ng, -0.1, 0.1), randSlice(r, ng, -1, 1)
			wq := mlx.FromSlice(packed, rows, cols*bits/32)
			s, b := mlx.FromSlice(sc, rows, cols/gs), mlx.FromSlice(bi, rows, cols/gs)
			w := mlx.Dequantize(wq, s, b, gs, bits)
			shapeEq(t, "Dequantize", w, rows, cols)
			closeTo(t, fmt.Sprintf("Dequantize bits=%d gs=%d", bits, gs), w.Float32s(), refDequant(codes, sc, bi, rows, cols, gs), 0, 0)
			mlx.Free(wq, s, b, w)
		}
	}
}

func TestQuantizeMLXRules(t *testing.T) {
	leakFree(t)
	r := newRNG(71)
	for _, bits := range quantBits {
		for _, gs := range quantGroups {
			rows, cols := 5, 2*gs
			wd := randSlice(r, rows*cols, -1, 1)
			// one group entirely positive, one with a large negative outlier
			for i := 0; i < gs; i++ {
				wd[i] = float32(math.Abs(float64(wd[i])))
			}
			wd[cols] = -3
			w := mlx.FromSlice(wd, rows, cols)
			wq, s, b, err := mlx.Quantize(w, gs, bits)
			if err != nil {
				t.Fatal(err)
			}
			shapeEq(t, "packed", wq, rows, cols*bits/32)
			shapeEq(t, "scales", s, rows, cols/gs)
			packed, sc, bi := wq.Uint32s(), s.Float32s(), b.Float32s()
			var codes []uint32
			for row := 0; row < rows; row++ {
				codes = append(codes, refUnpack(packed[row*cols*bits/32:], cols, bits)...)
			}
			nbins := float64(int(1)<<bits - 1)
			neg := 0
			for g := 0; g < rows*cols/gs; g++ {
				grp := wd[g*gs : (g+1)*gs]
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, v := range grp {
					lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
				}
				// MLX keeps the larger-magnitude extreme exactly: it is the
				// bias, reached by code 0, and the scale points inward.
				edge := hi
				if math.Abs(lo) > math.Abs(hi) {
					edge = lo
				}
				if float64(bi[g]) != edge {
					t.Fatalf("bits=%d gs=%d group %d: bias %v, want the extreme %v", bits, gs, g, bi[g], edge)
				}
				if (edge > 0) != (sc[g] < 0) {
					t.Fatalf("group %d: scale %v should point from %v into the range", g, sc[g], edge)
				}
				if sc[g] < 0 {
					neg++
				}
				// the scale: the range split into nbins steps, signed to
				// point away from the edge, then nudged so that the edge is
				// a whole number of steps from zero
				s0 := float32(math.Max(float64(float32(hi-lo)/float32(nbins)), 1e-7))
				if edge > 0 {
					s0 = -s0
				}
				q0 := float32(math.RoundToEven(float64(float32(edge) / s0)))
				wantS := s0
				if q0 != 0 {
					wantS = float32(edge) / q0
				}
				if sc[g] != wantS {
					t.Fatalf("bits=%d gs=%d group %d: scale %v want %v", bits, gs, g, sc[g], wantS)
				}
				for i, v := range grp {
					q := codes[g*gs+i]
					want := math.RoundToEven(float64((v - bi[g]) / sc[g]))
					want = math.Min(math.Max(want, 0), nbins)
					if float64(q) != want {
						t.Fatalf("bits=%d gs=%d: %v got code %d, want %v (s=%v b=%v)", bits, gs, v, q, want, sc[g], bi[g])
					}
					deq := float64(float32(sc[g]*float32(q)) + bi[g])
					if want > 0 && want < nbins && math.Abs(deq-float64(v)) > math.Abs(float64(sc[g]))*0.5001+1e-6 {
						t.Fatalf("bits=%d gs=%d: %v quantized to %v (q=%d s=%v b=%v)", bits, gs, v, deq, q, sc[g], bi[g])
					}
				}
			}
			if neg == 0 || neg == rows*cols/gs {
				t.Fatalf("expected both signs of scale, got %d negative of %d", neg, rows*cols/gs)
			}
			dq := mlx.Dequantize(wq, s, b, gs, bits)
			closeTo(t, "Dequantize(Quantize)", dq.Float32s(), refDequant(codes, sc, bi, rows, cols, gs), 0, 0)
			mlx.Free(w, wq, s, b, dq)
		}
	}
	w := mlx.Zeros([]int{2, 48}, mlx.Float32)
	defer w.Free()
	if _, _, _, err := mlx.Quantize(w, 32, 4); err == nil {
		t.Fatal("48 columns with group 32 must fail")
	}
	if _, _, _, err := mlx.Quantize(w, 48, 4); err == nil {
		t.Fatal("group 48 must fail")
	}
	if _, _, _, err := mlx.Quantize(w, 32, 7); err == nil {
		t.Fatal("7 bits must fail")
	}
}

func TestQuantizedMatmulAndEmbedding(t *testing.T) {
	leakFree(t)
	r := newRNG(72)
	for _, bits := range quantBits {
		for _, gs := range []int{32, 64, 128} {
			for _, transpose := range []bool{true, false} {
				m, k, n := 3, 128, 64 // k and n both multiples of every group size... n=64 fails gs=128 for !transpose
				if !transpose && gs == 128 {
					n = 128
				}
				rows, cols := n, k
				if !transpose {
					rows, cols = k, n
				}
				wd := randSlice(r, rows*cols, -1, 1)
				w := mlx.FromSlice(wd, rows, cols)
				wq, s, b, err := mlx.Quantize(w, gs, bits)
				if err != nil {
					t.Fatal(err)
				}
				deq := mlx.Dequantize(wq, s, b, gs, bits)
				dw := deq.Float32s()
				xd := randSlice(r, 2*m*k, -1, 1)
				x := mlx.FromSlice(xd, 2, m, k)
				y := mlx.QuantizedMatmul(x, wq, s, b, transpose, gs, bits)
				want, _ := refMatmul(xd, []int{2 * m, k}, dw, []int{rows, cols}, transpose)
				shapeEq(t, "QuantizedMatmul", y, 2, m, n)
				closeTo(t, fmt.Sprintf("QMM bits=%d gs=%d t=%v", bits, gs, transpose), y.Float32s(), want, 1e-5, 1e-5)
				if transpose {
					// quantized embedding == dequantized rows
					ids := mlx.FromSlice([]int32{3, 0, int32(n - 1), 3}, 2, 2)
					e := mlx.TakeQuantized(wq, s, b, ids, gs, bits)
					shapeEq(t, "TakeQuantized", e, 2, 2, k)
					var we []float64
					for _, id := range []int{3, 0, n - 1, 3} {
						we = append(we, f64s(dw[id*k:(id+1)*k])...)
					}
					closeTo(t, "TakeQuantized", e.Float32s(), we, 0, 0)
					mlx.Free(ids, e)
				}
				mlx.Free(w, wq, s, b, deq, x, y)
			}
		}
	}
}

// With half-precision scales the dequantized value is s*q rounded to the
// half type, plus b, rounded again (MLX's arithmetic in the weight dtype).
func TestQuantizeHalfPrecision(t *testing.T) {
	leakFree(t)
	r := newRNG(73)
	for _, dt := range []mlx.DType{mlx.Float16, mlx.BFloat16} {
		round := f16Round
		if dt == mlx.BFloat16 {
			round = bf16Round
		}
		for _, bits := range quantBits {
			w32 := mlx.FromSlice(randSlice(r, 4*64, -2, 2), 4, 64)
			w := mlx.AsType(w32, dt)
			wq, s, b, err := mlx.Quantize(w, 32, bits)
			if err != nil {
				t.Fatal(err)
			}
			if s.DType() != dt || b.DType() != dt {
				t.Fatalf("scales dtype %v, want %v", s.DType(), dt)
			}
			dq := mlx.Dequantize(wq, s, b, 32, bits)
			if dq.DType() != dt {
				t.Fatalf("dequantized dtype %v", dq.DType())
			}
			packed, sc, bi := wq.Uint32s(), s.Float32s(), b.Float32s()
			want := make([]float64, 4*64)
			for row := 0; row < 4; row++ {
				codes := refUnpack(packed[row*64*bits/32:], 64, bits)
				for c, q := range codes {
					g := row*2 + c/32
					want[row*64+c] = round(float64(float32(round(float64(sc[g]*float32(q))))) + float64(bi[g]))
				}
			}
			closeTo(t, fmt.Sprint("half dequantize ", dt, bits), dq.Float32s(), want, 0, 0)
			mlx.Free(w32, w, wq, s, b, dq)
		}
	}
}
