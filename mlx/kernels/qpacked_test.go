package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// packedShapes are [rows, cols, groupSize]: rows that leave a partial
// tile, a single block, decode shapes of a 0.5B model, and groups of 128
// with an odd group count (the one-group last superblock).
var packedShapes = [][3]int{{1, 128, 64}, {7, 128, 128}, {131, 896, 64}, {33, 4864, 64}, {42, 384, 128}, {64, 896, 128}}

// packedFixture quantizes a random [rows, cols] matrix and packs it,
// returning both forms.
func packedFixture(t *testing.T, r *rand.Rand, rows, cols, gs int) ([]uint32, []float32, []float32, PackedQ4) {
	t.Helper()
	w, s, b, err := Quantize(randSlice(r, rows*cols), rows, cols, gs, 4)
	if err != nil {
		t.Fatal(err)
	}
	return w, s, b, packFixture(t, w, s, b, rows, cols, gs)
}

func packFixture(t *testing.T, w []uint32, s, b []float32, rows, cols, gs int) PackedQ4 {
	t.Helper()
	p, err := PackQ4(w, s, b, rows, cols, gs, make([]byte, PackedQ4Bytes(rows, cols, gs)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPackQ4RoundTrip: the layout is a reordering, so unpacking gives back
// every word, scale and bias exactly.
func TestPackQ4RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, sh := range packedShapes {
		rows, cols, gs := sh[0], sh[1], sh[2]
		w, s, b, p := packedFixture(t, r, rows, cols, gs)
		w2, s2, b2, err := unpackQ4(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w, w2) || !slices.Equal(s, s2) || !slices.Equal(b, b2) {
			t.Errorf("%v: unpack differs from the original", sh)
		}
	}
}

// TestPackQ4Layout pins the byte positions the C kernel reads: a code
// byte, a scale and a bias of a row in the second tile and the second
// superblock, found by hand from the layout description.
func TestPackQ4Layout(t *testing.T) {
	const rows, cols, gs = 6, 256, 64 // 2 tiles; superblocks of 320 bytes
	w := make([]uint32, rows*cols/8)
	s, b := make([]float32, rows*cols/gs), make([]float32, rows*cols/gs)
	// Row 5 (tile 1, row 1), group 3 (superblock 1, its second group).
	w[5*32+16+3] = 0xA1B2C3D4 // block 1, bytes 12-15 of the row's 64
	s[5*4+3], b[5*4+3] = 1.5, -2.25
	p := packFixture(t, w, s, b, rows, cols, gs)
	tile := pq4TileBytes(cols, gs)
	if tile != 640 {
		t.Fatalf("tile of [4, 256] in groups of 64 is %d bytes, want 640", tile)
	}
	base := tile + 320 // tile 1, superblock 1
	if got := p.Data[base+1*64+12]; got != 0xD4 {
		t.Errorf("code byte = %#x, want 0xD4", got)
	}
	if got := math.Float32frombits(le32(p.Data[base+256+4*(2*1+1):])); got != 1.5 {
		t.Errorf("scale = %v, want 1.5", got)
	}
	if got := math.Float32frombits(le32(p.Data[base+256+32+4*(2*1+1):])); got != -2.25 {
		t.Errorf("bias = %v, want -2.25", got)
	}
	// Rows 6 and 7 of tile 1 are padding: all zero.
	for i := tile; i < 2*tile; i++ {
		inPad := (i-tile)%320 < 256 && ((i-tile)%320)/64 >= 2
		if inPad && p.Data[i] != 0 {
			t.Fatalf("padding byte %d is %#x", i, p.Data[i])
		}
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func TestPackQ4Rejects(t *testing.T) {
	w, s, b := make([]uint32, 4*96/8), make([]float32, 4*96/32), make([]float32, 4*96/32)
	if _, err := PackQ4(w, s, b, 4, 96, 32, make([]byte, 1024)); err == nil {
		t.Error("96 columns in groups of 32 accepted")
	}
	w, s, b = make([]uint32, 4*128/8), make([]float32, 4*2), make([]float32, 4*2)
	if _, err := PackQ4(w, s, b, 4, 128, 64, make([]byte, 10)); err == nil {
		t.Error("short destination accepted")
	}
	if _, err := PackQ4(w[:3], s, b, 4, 128, 64, make([]byte, PackedQ4Bytes(4, 128, 64))); err == nil {
		t.Error("short weights accepted")
	}
}

// unpackQ4 is PackQ4's inverse, read back by the layout description: the
// MLX layout of a packed matrix.
func unpackQ4(p PackedQ4) (w []uint32, scales, biases []float32, err error) {
	if err := p.check(); err != nil {
		return nil, nil, nil, err
	}
	gpr, wpr := p.Cols/p.GroupSize, p.Cols/8
	w, scales, biases = make([]uint32, p.Rows*wpr), make([]float32, p.Rows*gpr), make([]float32, p.Rows*gpr)
	at := 0
	for t := 0; t*pq4TileRows < p.Rows; t++ {
		for g0 := 0; g0 < gpr; g0 += 2 {
			ng := min(2, gpr-g0)
			for b := range ng * p.GroupSize / 128 {
				l := g0*p.GroupSize/128 + b
				for j := range pq4TileRows {
					if r := t*pq4TileRows + j; r < p.Rows {
						for i := range 16 {
							w[r*wpr+l*16+i] = binary.LittleEndian.Uint32(p.Data[at+j*64+4*i:])
						}
					}
				}
				at += 256
			}
			for j := range pq4TileRows {
				if r := t*pq4TileRows + j; r < p.Rows {
					for g := range ng {
						scales[r*gpr+g0+g] = math.Float32frombits(binary.LittleEndian.Uint32(p.Data[at+4*(2*j+g):]))
						biases[r*gpr+g0+g] = math.Float32frombits(binary.LittleEndian.Uint32(p.Data[at+32+4*(2*j+g):]))
					}
				}
			}
			at += 64
		}
	}
	return w, scales, biases, nil
}
