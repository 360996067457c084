package audio

import (
	"os"
	"testing"

	"hark/mlx/mlxtest"
)

func TestSniffSynthetic(t *testing.T) {
	mp3Frame := func() []byte { // MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 417 bytes
		f := make([]byte, 417)
		copy(f, []byte{0xFF, 0xFB, 0x90, 0x64})
		return f
	}
	twoFrames := append(mp3Frame(), mp3Frame()...)
	id3 := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x0a"), make([]byte, 10)...)
	adts := []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC} // frame length 16
	adts = append(adts, make([]byte, 9)...)
	adts = append(adts, 0xFF, 0xF1)
	cases := []struct {
		name string
		b    []byte
		want Container
	}{
		{"wav", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), WAV},
		{"rf64", []byte("RF64\xff\xff\xff\xffWAVEds64"), WAV},
		{"riff avi", []byte("RIFF\x24\x00\x00\x00AVI LIST"), Unknown},
		{"flac", []byte("fLaC\x00\x00\x00\x22"), FLAC},
		{"id3 flac", append(append([]byte{}, id3...), []byte("fLaC\x00")...), FLAC},
		{"ogg", []byte("OggS\x00\x02"), Ogg},
		{"m4a", []byte("\x00\x00\x00\x1cftypM4A \x00\x00\x02\x00"), MP4},
		{"aiff", []byte("FORM\x00\x00\x10\x00AIFFCOMM"), AIFF},
		{"caf", []byte("caff\x00\x01\x00\x00"), CAF},
		{"webm", []byte{0x1A, 0x45, 0xDF, 0xA3, 0x9F}, Matroska},
		{"mp3 frames", twoFrames, MP3},
		{"id3 mp3", append(append([]byte{}, id3...), twoFrames...), MP3},
		{"id3 only", id3[:10], MP3},
		{"adts", adts, ADTS},
		{"mp3 sync then junk", append(mp3Frame(), []byte("hello world")...), Unknown},
		{"text", []byte("hello, this is not audio"), Unknown},
		{"png", []byte("\x89PNG\r\n\x1a\n"), Unknown},
		{"empty", nil, Unknown},
		{"ff only", []byte{0xFF}, Unknown},
	}
	for _, c := range cases {
		if got := Sniff(c.b); got != c.want {
			t.Errorf("%s: Sniff = %q, want %q", c.name, got, c.want)
		}
	}
}

// Every shipped clip is recognised from its bytes alone.
func TestSniffAssets(t *testing.T) {
	for name, want := range map[string]Container{
		"jfk.wav": WAV, "jfk.flac": FLAC, "jfk.mp3": MP3, "jfk.m4a": MP4,
		"ls_test.flac": FLAC, "stereo_diarization.wav": WAV, "LJ002-0020.wav": WAV,
		"transcripts.json": Unknown,
	} {
		b, err := os.ReadFile(mlxtest.Assets(t, "audio", name))
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(b[:min(len(b), SniffLen)]); got != want {
			t.Errorf("%s: Sniff = %q, want %q", name, got, want)
		}
	}
}

var knownContainers = map[Container]bool{Unknown: true, WAV: true, FLAC: true, MP3: true, Ogg: true, MP4: true, ADTS: true, AIFF: true, CAF: true, Matroska: true, AMR: true}

// FuzzSniff: any bytes give one of the known answers, without panicking,
// and the Ogg codec probe and MPEG header parser survive them too.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"RIFF\x24\x00\x00\x00WAVE", "fLaC", "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis",
		"ID3\x04\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64", "\x00\x00\x00\x1cftypM4A ", "\xff\xf1\x50\x80\x02\x1f\xfc", "\xff\xfb\x90\x64"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := Sniff(b)
		if !knownContainers[c] {
			t.Fatalf("Sniff returned %q", c)
		}
		if c == Ogg {
			oggCodec(b)
		}
		parseMPEGHeader(b)
		id3Size(b)
	})
}
