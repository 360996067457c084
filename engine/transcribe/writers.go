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
	switch format {
	case "txt":
		return writeTXT(w, r)
	case "srt":
		return writeSubtitles(w, r, true)
	case "vtt":
		return writeSubtitles(w, r, false)
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
func writeSubtitles(w io.Writer, r *Result, srt bool) error {
	var b strings.Builder
	if !srt {
		b.WriteString("WEBVTT\n\n")
	}
	n := 0
	for _, s := range r.Segments {
		text := strings.ReplaceAll(strings.TrimSpace(s.Text), "-->", "->")
		if text == "" {
			continue
		}
		n++
		if srt {
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", n, timestamp(s.StartSec, true, ","), timestamp(s.EndSec, true, ","), text)
		} else {
			fmt.Fprintf(&b, "%s --> %s\n%s\n\n", timestamp(s.StartSec, false, "."), timestamp(s.EndSec, false, "."), text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
