package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// encodeSamples writes float samples in the given WAV encoding.
func encodeSamples(x []float32, tag uint16, bits int) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	for _, v := range x {
		f := float64(v)
		switch {
		case tag == wavPCM && bits == 8:
			b.WriteByte(byte(quantize(f, 8) + 128))
		case tag == wavPCM && bits == 16:
			binary.Write(&b, le, int16(quantize(f, 16)))
		case tag == wavPCM && bits == 24:
			v := int32(quantize(f, 24))
			b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16)})
		case tag == wavPCM && bits == 32:
			binary.Write(&b, le, int32(quantize(f, 32)))
		case tag == wavFloat && bits == 32:
			binary.Write(&b, le, float32(f))
		case tag == wavFloat && bits == 64:
			binary.Write(&b, le, f)
		}
	}
	return b.Bytes()
}

// quantize scales f to a signed integer of the given width, clamped.
func quantize(f float64, bits int) int64 {
	full := math.Ldexp(1, bits-1)
	return int64(math.Max(-full, math.Min(full-1, math.Round(f*full))))
}

// Every PCM and float layout decodes to the samples that were written,
// within the format's quantisation step, through both plain and
// WAVE_FORMAT_EXTENSIBLE headers, with odd and skipped chunks before data.
func TestWAVEncodings(t *testing.T) {
	x := make([]float32, 2*500)
	for i := range x {
		x[i] = float32(0.9 * math.Sin(float64(i)*0.37))
	}
	cases := []struct {
		tag  uint16
		bits int
		tol  float64
	}{
		{wavPCM, 8, 1.0 / 256}, {wavPCM, 16, 1.0 / 65536}, {wavPCM, 24, 1.0 / (1 << 24)}, {wavPCM, 32, 1e-7},
		{wavFloat, 32, 0}, {wavFloat, 64, 1e-8},
	}
	for _, c := range cases {
		for _, ext := range []bool{false, true} {
			spec := wavSpec{tag: c.tag, channels: 2, rate: 22050, bits: c.bits, dataSize: -1,
				data:   encodeSamples(x, c.tag, c.bits),
				before: []rawChunk{{"LIST", []byte("INFOISFT\x03\x00\x00\x00abc")}, {"JUNK", []byte{1, 2, 3}}}}
			if ext {
				spec.tag, spec.subTag = wavExtensible, c.tag
			}
			name := (&wavHeader{tag: c.tag, bits: c.bits}).codec()
			if ext {
				name += "/extensible"
			}
			got, in, err := decodeNative(t, writeTemp(t, "x.wav", spec.bytes()))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if in.SampleRate != 22050 || in.Channels != 2 || in.Frames != 500 || in.BitsPerSample != c.bits {
				t.Fatalf("%s: info %+v", name, in)
			}
			if len(got) != len(x) {
				t.Fatalf("%s: %d samples, want %d", name, len(got), len(x))
			}
			for i := range x {
				if d := math.Abs(float64(got[i] - x[i])); d > c.tol+1e-7 {
					t.Fatalf("%s: sample %d = %v, want %v", name, i, got[i], x[i])
				}
			}
		}
	}
}

// G.711 reference points: silence, the largest codes and the sign bit, then
// whole µ-law and A-law WAV files.
func TestG711(t *testing.T) {
	for b, want := range map[byte]int{0xFF: 0, 0x7F: 0, 0x80: 32124, 0x00: -32124, 0xF0: 120} {
		if g := muLaw(b); g != want {
			t.Errorf("muLaw(%#x) = %d, want %d", b, g, want)
		}
	}
	for b, want := range map[byte]int{0xD5: 8, 0x55: -8, 0xAA: 32256, 0x2A: -32256} {
		if g := aLaw(b); g != want {
			t.Errorf("aLaw(%#x) = %d, want %d", b, g, want)
		}
	}
	spec := wavSpec{tag: wavMuLaw, channels: 1, rate: 8000, bits: 8, dataSize: -1, data: []byte{0xFF, 0x80, 0x00}}
	got, in, err := decodeNative(t, writeTemp(t, "mu.wav", spec.bytes()))
	if err != nil || in.Codec != "pcm_mulaw" {
		t.Fatalf("µ-law WAV: %v %+v", err, in)
	}
	if want := []float32{0, 32124.0 / 32768, -32124.0 / 32768}; !slices.Equal(got, want) {
		t.Fatalf("µ-law WAV decoded %v, want %v", got, want)
	}
	spec.tag, spec.data = wavALaw, []byte{0xD5, 0xAA}
	got, _, err = decodeNative(t, writeTemp(t, "a.wav", spec.bytes()))
	if want := []float32{8.0 / 32768, 32256.0 / 32768}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("A-law WAV decoded %v (%v), want %v", got, err, want)
	}
}

// A recorder that never patched the data size (0 or 0xFFFFFFFF) gets its
// samples read to the end of the file, and its length from the file size.
func TestWAVStreamedSizes(t *testing.T) {
	data := pcm16(sine(1600, 16000, 440, 0.5))
	for _, size := range []int64{0, 0xFFFFFFFF} {
		spec := wavSpec{tag: wavPCM, channels: 1, rate: 16000, bits: 16, dataSize: size, data: data}
		p := writeTemp(t, "s.wav", spec.bytes())
		in, err := Info(p)
		if err != nil || in.Frames != 1600 {
			t.Fatalf("size %#x: info %+v, %v", size, in, err)
		}
		got, _, err := decodeNative(t, p)
		if err != nil || len(got) != 1600 {
			t.Fatalf("size %#x: decoded %d samples, %v", size, len(got), err)
		}
	}
}

func TestRF64(t *testing.T) {
	data := pcm16(sine(800, 8000, 300, 0.5))
	spec := wavSpec{riff: "RF64", ds64Data: int64(len(data)), tag: wavPCM, channels: 1, rate: 8000, bits: 16, dataSize: 0xFFFFFFFF, data: data}
	got, in, err := decodeNative(t, writeTemp(t, "rf.wav", spec.bytes()))
	if err != nil || len(got) != 800 || in.Frames != 800 {
		t.Fatalf("RF64: %d samples, info %+v, %v", len(got), in, err)
	}
}

// A data chunk that promises more than the file holds: the samples that
// are there come out, then ErrTruncated; Info reports it too.
func TestWAVTruncated(t *testing.T) {
	data := pcm16(sine(1000, 16000, 440, 0.5))
	full := wavSpec{tag: wavPCM, channels: 1, rate: 16000, bits: 16, dataSize: -1, data: data}.bytes()
	p := writeTemp(t, "cut.wav", full[:len(full)-501]) // also cuts a frame in half
	got, _, err := decodeNative(t, p)
	if !errors.Is(err, ErrTruncated) || len(got) != 749 {
		t.Fatalf("decoded %d samples, err %v; want 749 and ErrTruncated", len(got), err)
	}
	if _, err := Info(p); !errors.Is(err, ErrTruncated) || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("Info: %v", err)
	}
	x, err := Decode(p, Options{})
	if !errors.Is(err, ErrTruncated) || len(x) != 749 {
		t.Fatalf("Decode: %d samples, %v", len(x), err)
	}
}

// Headers that cannot describe real audio are refused with a specific
// class of error, each message naming the problem.
func TestWAVBadHeaders(t *testing.T) {
	ok := wavSpec{tag: wavPCM, channels: 1, rate: 16000, bits: 16, dataSize: -1, data: make([]byte, 100)}
	cases := []struct {
		name string
		mod  func(*wavSpec)
		raw  func([]byte) []byte
		want error
		msg  string
	}{
		{"zero channels", func(s *wavSpec) { s.channels = 0; s.blockAlign = 2 }, nil, ErrBadHeader, "0 channels"},
		{"zero rate", func(s *wavSpec) { s.rate = 0 }, nil, ErrBadHeader, "0 Hz"},
		{"absurd rate", func(s *wavSpec) { s.rate = 2_000_000_000 }, nil, ErrBadHeader, "Hz"},
		{"1 Hz rate", func(s *wavSpec) { s.rate = 1 }, nil, ErrBadHeader, "1 Hz"},
		{"too many channels", func(s *wavSpec) { s.channels = 5000; s.blockAlign = 10000 }, nil, ErrBadHeader, "channels"},
		{"mp3 in wav", func(s *wavSpec) { s.tag = 0x55 }, nil, ErrUnsupported, "MPEG Layer III"},
		{"adpcm", func(s *wavSpec) { s.tag = 0x02; s.bits = 4; s.blockAlign = 256 }, nil, ErrUnsupported, "ADPCM"},
		{"extensible mp3", func(s *wavSpec) { s.tag, s.subTag = wavExtensible, 0x55 }, nil, ErrUnsupported, "0x0055"},
		{"block align", func(s *wavSpec) { s.channels = 2; s.blockAlign = 3 }, nil, ErrBadHeader, "block"},
		{"bits beyond slot", func(s *wavSpec) { s.bits = 24; s.blockAlign = 2 }, nil, ErrBadHeader, "bits"},
		{"float16", func(s *wavSpec) { s.tag = wavFloat }, nil, ErrUnsupported, "16-bit"},
		{"huge fmt", nil, func(b []byte) []byte { return setChunkSize(b, "fmt ", 0x7FFFFFF0) }, ErrBadHeader, "fmt chunk"},
		{"huge junk", func(s *wavSpec) { s.before = []rawChunk{{"JUNK", []byte{1}}} }, func(b []byte) []byte { return setChunkSize(b, "JUNK", 0xFFFFFFF0) }, ErrTruncated, "JUNK"},
		{"no data", nil, func(b []byte) []byte { return b[:bytes.Index(b, []byte("data"))] }, ErrEmpty, "no data chunk"},
		{"no fmt", nil, func(b []byte) []byte { return append(b[:12], []byte("data\x00\x00\x00\x00")...) }, ErrUnsupported, "before the fmt"},
		{"empty data", func(s *wavSpec) { s.data = nil }, nil, ErrEmpty, "no audio"},
		{"RIFX", nil, func(b []byte) []byte { copy(b, "RIFX"); return b }, ErrUnsupported, "big-endian"},
		{"header cut", nil, func(b []byte) []byte { return b[:30] }, ErrTruncated, "fmt chunk"},
	}
	for _, c := range cases {
		s := ok
		if c.mod != nil {
			c.mod(&s)
		}
		b := s.bytes()
		if c.raw != nil {
			b = c.raw(b)
		}
		p := writeTemp(t, "bad.wav", b)
		_, err := Decode(p, Options{})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: Decode error %v; want %v mentioning %q and the path", c.name, err, c.want, c.msg)
		}
		if _, err := Info(p); !errors.Is(err, c.want) {
			t.Errorf("%s: Info error %v; want %v", c.name, err, c.want)
		}
	}
}

func setChunkSize(b []byte, id string, size uint32) []byte {
	i := bytes.Index(b, []byte(id))
	binary.LittleEndian.PutUint32(b[i+4:], size)
	return b
}

// FuzzWAV feeds arbitrary bytes to the WAV parser and decoder: they must
// return an error or sane samples, never panic or loop.
func FuzzWAV(f *testing.F) {
	seed := []wavSpec{
		{tag: wavPCM, channels: 1, rate: 16000, bits: 16, dataSize: -1, data: make([]byte, 64)},
		{tag: wavPCM, channels: 2, rate: 44100, bits: 24, dataSize: -1, data: make([]byte, 60), before: []rawChunk{{"LIST", []byte("abc")}}},
		{tag: wavExtensible, subTag: wavFloat, channels: 2, rate: 48000, bits: 32, dataSize: -1, data: make([]byte, 64)},
		{tag: wavMuLaw, channels: 1, rate: 8000, bits: 8, dataSize: 0xFFFFFFFF, data: make([]byte, 10)},
		{tag: 0x55, channels: 1, rate: 8000, bits: 16, dataSize: -1},
		{riff: "RF64", ds64Data: 32, tag: wavPCM, channels: 1, rate: 8000, bits: 8, dataSize: 0xFFFFFFFF, data: make([]byte, 32)},
	}
	for _, s := range seed {
		f.Add(s.bytes())
	}
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		s, err := newWAVSource(r, nil, int64(len(b)))
		if err != nil {
			return
		}
		in := s.info()
		if in.Channels < 1 || in.Channels > maxChannels || in.SampleRate < minSampleRate || in.SampleRate > maxSampleRate {
			t.Fatalf("accepted format %+v", in)
		}
		buf := make([]float32, 7*in.Channels)
		total := 0
		for range len(b) + 2 {
			n, err := s.read(buf)
			if n%in.Channels != 0 {
				t.Fatalf("read %d samples, not whole frames of %d", n, in.Channels)
			}
			total += n
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) {
					t.Fatalf("unexpected error class: %v", err)
				}
				if int64(total/in.Channels) > in.Frames && in.Frames >= 0 {
					t.Fatalf("decoded %d frames, header said %d", total/in.Channels, in.Frames)
				}
				return
			}
		}
		t.Fatalf("decoder did not finish %d bytes in %d reads", len(b), len(b)+2)
	})
}
