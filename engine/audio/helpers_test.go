package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// wavSpec describes a WAV file to build in a test.
type wavSpec struct {
	tag        uint16 // format tag; wavExtensible wraps subTag
	subTag     uint16
	channels   int
	rate       int
	bits       int // bits per sample field
	blockAlign int // 0: derived
	before     []rawChunk
	dataSize   int64 // -1: real size; otherwise written as is
	data       []byte
	riff       string // "RIFF" unless set
	ds64Data   int64  // for RF64
}

type rawChunk struct {
	id   string
	body []byte
}

func (s wavSpec) bytes() []byte {
	le := binary.LittleEndian
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, le, v) }
	riff := s.riff
	if riff == "" {
		riff = "RIFF"
	}
	b.WriteString(riff)
	w(uint32(0)) // patched below
	b.WriteString("WAVE")
	if riff == "RF64" {
		b.WriteString("ds64")
		w(uint32(28))
		w(uint64(0))
		w(uint64(s.ds64Data))
		w(uint64(0))
		w(uint32(0))
	}
	ba := s.blockAlign
	if ba == 0 {
		ba = s.channels * ((s.bits + 7) / 8)
	}
	fmtBody := new(bytes.Buffer)
	binary.Write(fmtBody, le, s.tag)
	binary.Write(fmtBody, le, uint16(s.channels))
	binary.Write(fmtBody, le, uint32(s.rate))
	binary.Write(fmtBody, le, uint32(s.rate*ba))
	binary.Write(fmtBody, le, uint16(ba))
	binary.Write(fmtBody, le, uint16(s.bits))
	if s.tag == wavExtensible {
		binary.Write(fmtBody, le, uint16(22))
		binary.Write(fmtBody, le, uint16(s.bits))
		binary.Write(fmtBody, le, uint32(0))
		binary.Write(fmtBody, le, s.subTag)
		fmtBody.Write([]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71})
	}
	chunk := func(id string, body []byte) {
		b.WriteString(id)
		w(uint32(len(body)))
		b.Write(body)
		if len(body)%2 == 1 {
			b.WriteByte(0)
		}
	}
	for _, c := range s.before {
		chunk(c.id, c.body)
	}
	chunk("fmt ", fmtBody.Bytes())
	b.WriteString("data")
	if s.dataSize >= 0 {
		w(uint32(s.dataSize))
	} else {
		w(uint32(len(s.data)))
	}
	b.Write(s.data)
	out := b.Bytes()
	le.PutUint32(out[4:], uint32(len(out)-8))
	return out
}

// writeTemp writes data to a file in the test's temp dir.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAllSource decodes a whole source natively (interleaved, own rate).
func readAllSource(s source) ([]float32, error) {
	ch := s.info().Channels
	buf := make([]float32, 1000*ch)
	var out []float32
	for {
		n, err := s.read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func decodeNative(t testing.TB, path string) ([]float32, FileInfo, error) {
	t.Helper()
	s, err := openSource(path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	defer s.Close()
	x, err := readAllSource(s)
	return x, s.info(), err
}

func sine(n, rate int, freq, amp float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return x
}

func pcm16(x []float32) []byte {
	b := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(math.Round(float64(v)*32767))))
	}
	return b
}

// bestCorrelation is the normalized cross-correlation of a and b maximised
// over lags in [-maxLag, maxLag] (b shifted by lag), and that lag. The lag
// is found coarsely on 40-sample energy envelopes, then refined sample by
// sample around it, which keeps the search cheap.
func bestCorrelation(a, b []float32, maxLag int) (float64, int) {
	const hop = 40
	ea, eb := envelope(a, hop), envelope(b, hop)
	coarse, best := 0, -2.0
	for l := -maxLag / hop; l <= maxLag/hop; l++ {
		if c := corrAt(ea, eb, l); c > best {
			best, coarse = c, l
		}
	}
	best, bestLag := -2.0, 0
	for lag := coarse*hop - 2*hop; lag <= coarse*hop+2*hop; lag++ {
		if c := corrAt(a, b, lag); c > best {
			best, bestLag = c, lag
		}
	}
	return best, bestLag
}

func envelope(x []float32, hop int) []float32 {
	e := make([]float32, len(x)/hop)
	for i := range e {
		var s float32
		for _, v := range x[i*hop : (i+1)*hop] {
			s += v * v
		}
		e[i] = s
	}
	return e
}

func corrAt(a, b []float32, lag int) float64 {
	var sab, saa, sbb float64
	for i := max(0, -lag); i < len(a) && i+lag < len(b); i++ {
		x, y := float64(a[i]), float64(b[i+lag])
		sab += x * y
		saa += x * x
		sbb += y * y
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}
