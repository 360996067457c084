package audio

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"hark/mlx/mlxtest"
)

// FuzzDecode runs arbitrary bytes (seeded with the heads of real MP3, FLAC
// and WAV files) through sniffing, Info and every Go decoder: the
// answer must be samples or an error naming the file, never a panic.
// Third-party decoders sit behind recover; this checks that nothing slips
// past it.
func FuzzDecode(f *testing.F) {
	if dir := mlxtest.AssetsDir(); dir != "" {
		for _, name := range []string{"jfk.mp3", "ls_test.flac", "jfk.wav"} {
			if b, err := os.ReadFile(filepath.Join(dir, "audio", name)); err == nil {
				f.Add(b[:min(len(b), 1500)])
			}
		}
	}
	f.Add(wavSpec{tag: wavPCM, channels: 2, rate: 44100, bits: 16, dataSize: -1, data: make([]byte, 400)}.bytes())
	fuzzAudio(f, func([]byte) bool { return true })
}

// Each format on its own (issue 17): seeded with a tiny file of that
// format made for the purpose (testdata/seeds), and fed only inputs that
// still sniff as it, so the fuzzer's time goes to that decoder.
func FuzzMP3(f *testing.F)  { fuzzFormat(f, "seed.mp3", MP3) }
func FuzzFLAC(f *testing.F) { fuzzFormat(f, "seed.flac", FLAC) }
func FuzzOgg(f *testing.F)  { fuzzFormat(f, "seed.ogg", Ogg) }
func FuzzMP4(f *testing.F)  { fuzzFormat(f, "seed.m4a", MP4) }

func fuzzFormat(f *testing.F, seed string, want Container) {
	b, err := os.ReadFile(filepath.Join("testdata", "seeds", seed))
	if err != nil {
		f.Fatal(err)
	}
	if got := Sniff(b[:min(len(b), SniffLen)]); got != want {
		f.Fatalf("seed %s sniffs as %q", seed, got)
	}
	if _, err := Info(filepath.Join("testdata", "seeds", seed)); err != nil {
		f.Fatalf("seed %s: %v", seed, err)
	}
	f.Add(b)
	fuzzAudio(f, func(b []byte) bool { return Sniff(b[:min(len(b), SniffLen)]) == want })
}

// fuzzAudio runs each input that keep accepts through sniffing, Info and
// the decoders: samples or an error naming the file, never a panic.
func fuzzAudio(f *testing.F, keep func([]byte) bool) {
	// External programs are not what is fuzzed here, and starting one per
	// input would make the run crawl.
	old := lookPath
	lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	defer func() { lookPath = old }()
	// One file, rewritten for each input: each fuzz worker process runs
	// this body and gets its own directory, removed at the end.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if !keep(b) {
			return
		}
		p := filepath.Join(dir, "in")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Info(p); err != nil && !isFileErr(err, p) {
			t.Fatalf("Info error does not name the file: %v", err)
		}
		s, err := Open(p, Options{})
		if err != nil {
			if !isFileErr(err, p) {
				t.Fatalf("Open error does not name the file: %v", err)
			}
			return
		}
		defer s.Close()
		buf := make([]float32, 4096)
		for total := 0; total < 1<<24; {
			n, err := s.Next(buf)
			total += n
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !isFileErr(err, p) {
					t.Fatalf("Next error does not name the file: %v", err)
				}
				return
			}
		}
	})
}

func isFileErr(err error, path string) bool {
	var fe *FileError
	return errors.As(err, &fe) && fe.Path == path
}
