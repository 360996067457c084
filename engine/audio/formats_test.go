package audio

import (
	"strings"
	"testing"
)

// Every container Sniff can return has exactly one row, every extension
// names one format, and the signatures in the table are what Sniff uses.
func TestFormatsTable(t *testing.T) {
	seen := map[Container]bool{}
	exts := map[string]Container{}
	for _, f := range Formats() {
		if seen[f.Container] {
			t.Errorf("%s listed twice", f.Container)
		}
		seen[f.Container] = true
		if f.Name == "" || f.MIME == "" || f.Codecs == "" || f.Magic == "" || len(f.Extensions) == 0 {
			t.Errorf("%s: incomplete row %+v", f.Container, f)
		}
		if f.Decoder != builtIn && f.Decoder != system {
			t.Errorf("%s: decoder %q", f.Container, f.Decoder)
		}
		for _, e := range f.Extensions {
			if e != strings.ToLower(e) || !strings.HasPrefix(e, ".") {
				t.Errorf("%s: extension %q", f.Container, e)
			}
			if c, dup := exts[e]; dup {
				t.Errorf("%s claimed by %s and %s", e, c, f.Container)
			}
			exts[e] = f.Container
		}
		if !strings.Contains(FormatNames(), f.Name) {
			t.Errorf("the unknown-format message leaves out %s", f.Name)
		}
	}
	for _, c := range []Container{WAV, FLAC, MP3, Ogg, MP4, ADTS, AIFF, CAF, Matroska, AMR} {
		if !seen[c] {
			t.Errorf("container %s has no row", c)
		}
	}
	heads := map[Container][]byte{
		WAV:      []byte("RIFF\x24\x00\x00\x00WAVEfmt "),
		FLAC:     []byte("fLaC\x00\x00\x00\x22"),
		Ogg:      []byte("OggS\x00\x02"),
		MP4:      []byte("\x00\x00\x00\x20ftypM4A "),
		AIFF:     []byte("FORM\x00\x00\x00\x00AIFF"),
		CAF:      []byte("caff\x00\x01"),
		Matroska: []byte("\x1A\x45\xDF\xA3\x9f"),
		AMR:      []byte("#!AMR\n"),
	}
	for c, head := range heads {
		if got := Sniff(head); got != c {
			t.Errorf("Sniff(%q) = %q, want %q", head, got, c)
		}
	}
}

func TestFormatByName(t *testing.T) {
	for name, want := range map[string]string{
		"Talk.M4A": "audio/mp4", "a.b.flac": "audio/flac", "x.opus": "audio/ogg", "clip.mp3": "audio/mpeg",
	} {
		f, ok := FormatByName(name)
		if !ok || f.MIME != want {
			t.Errorf("%s: %q %v, want %q", name, f.MIME, ok, want)
		}
	}
	if _, ok := FormatByName("notes.txt"); ok {
		t.Error("notes.txt has a format")
	}
	if got := describe(Ogg, "opus"); got != "Ogg opus" {
		t.Errorf("describe(Ogg, opus) = %q", got)
	}
}
