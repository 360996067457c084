package transcribe

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Formats are the output formats Write knows.
var Formats = []string{"txt", "srt", "vtt", "json"}

// Write renders a result as txt (one segment per line), srt, vtt (WebVTT)
// or json (OpenAI's verbose_json: text, segments, language). Segments with
// no text (cleared as silent or instantaneous) are left out of txt, srt
// and vtt.
func Write(w io.Writer, format string, r *Result) error {
	return WriteWith(w, format, r, WriteOptions{})
}

// WordCues are the word-level subtitle layouts (WriteOptions.Words):
// "word" is one cue per word (srt, vtt), "karaoke" one cue per segment
// with WebVTT timestamp tags before each word and <c> around it (vtt).
var WordCues = []string{"word", "karaoke"}

// WriteOptions tune subtitles.
type WriteOptions struct {
	// Words is "" (one cue per segment) or one of WordCues. It needs a
	// result transcribed with word timestamps; segments without words
	// keep one cue for the segment.
	Words string
}

// WriteWith is Write with subtitle options.
func WriteWith(w io.Writer, format string, r *Result, o WriteOptions) error {
	switch o.Words {
	case "", "word":
	case "karaoke":
		if format != "vtt" {
			return fmt.Errorf("karaoke cues are a WebVTT feature: use --format vtt")
		}
	default:
		return fmt.Errorf("unknown word cue layout %q (want %s)", o.Words, strings.Join(WordCues, " or "))
	}
	switch format {
	case "txt":
		return writeTXT(w, r)
	case "srt":
		return writeSubtitles(w, r, true, o.Words)
	case "vtt":
		return writeSubtitles(w, r, false, o.Words)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(jsonResult(r))
	}
	return fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(Formats, ", "))
}

func writeTXT(w io.Writer, r *Result) error {
	for _, s := range r.Segments {
		if t := strings.TrimSpace(s.Text); t != "" {
			if _, err := fmt.Fprintln(w, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSubtitles writes SRT (numbered cues, hours always shown, comma
// before milliseconds) or WebVTT (header, hours only when needed, dot).
func writeSubtitles(w io.Writer, r *Result, srt bool, words string) error {
	var b strings.Builder
	if !srt {
		b.WriteString("WEBVTT\n\n")
	}
	n := 0
	cue := func(start, end float64, text string) {
		n++
		if srt {
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", n, timestamp(start, true, ","), timestamp(end, true, ","), text)
		} else {
			fmt.Fprintf(&b, "%s --> %s\n%s\n\n", timestamp(start, false, "."), timestamp(end, false, "."), text)
		}
	}
	for _, s := range r.Segments {
		text := cueText(s.Text)
		if text == "" {
			continue
		}
		switch {
		case words == "word" && len(s.Words) > 0:
			for _, wd := range s.Words {
				if t := cueText(wd.Word); t != "" {
					cue(wd.StartSec, wd.EndSec, t)
				}
			}
		case words == "karaoke" && len(s.Words) > 0:
			// <c> spans keep each word's own spacing; the tag before a
			// word is when it starts (the first starts with the cue).
			var k strings.Builder
			for i, wd := range s.Words {
				t := strings.ReplaceAll(wd.Word, "-->", "->")
				if i == 0 {
					t = strings.TrimLeft(t, " ")
				} else {
					fmt.Fprintf(&k, "<%s>", timestamp(wd.StartSec, true, "."))
				}
				fmt.Fprintf(&k, "<c>%s</c>", escapeVTT(t))
			}
			cue(s.Words[0].StartSec, s.Words[len(s.Words)-1].EndSec, k.String())
		default:
			cue(s.StartSec, s.EndSec, text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cueText(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "-->", "->") }

// escapeVTT escapes what would start or break a tag inside cue text.
func escapeVTT(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// timestamp formats seconds as [HH:]MM:SS.mmm, rounding to the millisecond.
func timestamp(sec float64, hours bool, marker string) string {
	ms := int64(math.Round(math.Max(sec, 0) * 1000))
	h := ms / 3_600_000
	ms -= h * 3_600_000
	m := ms / 60_000
	ms -= m * 60_000
	s := ms / 1000
	ms -= s * 1000
	prefix := ""
	if hours || h > 0 {
		prefix = fmt.Sprintf("%02d:", h)
	}
	return fmt.Sprintf("%s%02d:%02d%s%03d", prefix, m, s, marker, ms)
}

// jsonResult keeps the key order of OpenAI's result dict.
func jsonResult(r *Result) any {
	segs := r.Segments
	if segs == nil {
		segs = []Segment{}
	}
	return struct {
		Text     string    `json:"text"`
		Segments []Segment `json:"segments"`
		Language string    `json:"language"`
	}{r.Text, segs, r.Language}
}
