package audio

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"hark/mlx/mlxtest"
)

// checkBad asserts that both Decode and Info fail on path with an
// error of class want whose message starts with the path, and never panic.
func checkBad(t *testing.T, name, path string, want error, msg string) {
	t.Helper()
	_, err := Decode(path, Options{})
	if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: Decode error %q; want %v containing %q", name, err, want, msg)
	}
	if _, err := Info(path); !errors.Is(err, want) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("%s: Info error %q; want %v", name, err, want)
	}
}

func TestNotAudio(t *testing.T) {
	dir := t.TempDir()
	checkBad(t, "text", writeTemp(t, "notes.wav", []byte("Meeting notes, not a recording.\n")), ErrUnknownFormat, "not a recognised audio file")
	checkBad(t, "png", writeTemp(t, "cover.mp3", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")), ErrUnknownFormat, "not a recognised")
	checkBad(t, "empty file", writeTemp(t, "empty.m4a", nil), ErrEmpty, "0 bytes")
	checkBad(t, "directory", dir, ErrUnknownFormat, "directory")
	if _, err := Decode(dir+"/missing.wav", Options{}); !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), dir+"/missing.wav: ") {
		t.Errorf("missing file: %v", err)
	}
}

// A cut MP3 yields what is there, then ErrTruncated; one cut before its
// first whole frame is an error outright.
func TestTruncatedMP3(t *testing.T) {
	b, err := os.ReadFile(mlxtest.Assets(t, "audio", "jfk.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	half := writeTemp(t, "half.mp3", b[:len(b)/2+17]) // mid-frame
	x, err := Decode(half, Options{})
	if !errors.Is(err, ErrTruncated) || len(x) < 80000 || len(x) > 100000 {
		t.Errorf("half mp3: %d samples, %v", len(x), err)
	}
	if in, err := Info(half); !errors.Is(err, ErrTruncated) || in.SampleRate != 16000 {
		t.Errorf("half mp3 Info: %+v, %v", in, err)
	}
	checkBad(t, "mp3 cut in its ID3 tag", writeTemp(t, "tag.mp3", b[:30]), ErrTruncated, "ID3")
	checkBad(t, "mp3 cut in its first frame", writeTemp(t, "f1.mp3", b[:70]), ErrTruncated, "first complete frame")
}

// Garbage after a valid ID3 tag, and a FLAC whose frames are damaged: clear
// errors, no panics.
func TestCorruptData(t *testing.T) {
	id3 := []byte("ID3\x04\x00\x00\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	junk := make([]byte, 5000)
	for i := range junk {
		junk[i] = byte(i*7 + i/13)
	}
	checkBad(t, "id3 then junk", writeTemp(t, "junk.mp3", append(id3, junk...)), ErrCorrupt, "no MPEG audio frames")

	b, err := os.ReadFile(mlxtest.Assets(t, "audio", "ls_test.flac"))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), b...)
	for i := len(bad) / 3; i < len(bad)/3+2000; i++ {
		bad[i] ^= 0x5A
	}
	p := writeTemp(t, "bad.flac", bad)
	if _, err := Decode(p, Options{}); !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), p+": ") {
		t.Errorf("damaged flac: %v", err)
	}
	cut := writeTemp(t, "cut.flac", b[:len(b)/2])
	if x, err := Decode(cut, Options{}); !errors.Is(err, ErrTruncated) || len(x) == 0 {
		t.Errorf("cut flac: %d samples, %v", len(x), err)
	}
	// A STREAMINFO claiming 0 Hz.
	zero := append([]byte(nil), b[:4096]...)
	zero[18], zero[19], zero[20] = 0, 0, zero[20]&0x0F
	checkBad(t, "flac 0 Hz", writeTemp(t, "zero.flac", zero), ErrCorrupt, "FLAC")
}

// Layer II is real MPEG audio but not MP3: described by Info, and
// decoded only through the system decoder, whose absence is named.
func TestMPEGLayerII(t *testing.T) {
	frame := make([]byte, 417) // MPEG-1 Layer II, 128 kbit/s, 44.1 kHz: 417 bytes
	copy(frame, []byte{0xFF, 0xFD, 0x80, 0x04})
	var b []byte
	for range 20 {
		b = append(b, frame...)
	}
	p := writeTemp(t, "x.mp2", b)
	if in, err := Info(p); err != nil || in.Codec != "mp2" || in.SampleRate != 44100 || in.Frames != 20*1152 {
		t.Errorf("Info: %+v, %v", in, err)
	}
	if runtime.GOOS == "darwin" {
		return
	}
	defer func(old func(string) (string, error)) { lookPath = old }(lookPath)
	lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	_, err := Decode(p, Options{})
	if !errors.Is(err, ErrNeedsTool) || !strings.Contains(err.Error(), "MPEG-1 Layer II audio needs ffmpeg") {
		t.Errorf("Decode without ffmpeg: %v", err)
	}
}
