package transcription

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hark/app/apierr"
	"hark/engine/transcribe"
	"hark/library/store"
)

// ExportTypes are the Content-Types of the export formats.
var ExportTypes = map[string]string{
	"txt": "text/plain; charset=utf-8", "srt": "application/x-subrip; charset=utf-8",
	"vtt": "text/vtt; charset=utf-8", "json": "application/json; charset=utf-8",
}

// Render writes a stored transcript in one of the engine's
// formats; the segments are stored in the shape its writers read.
func Render(t store.Transcript, format string) ([]byte, error) {
	return RenderWith(t, format, transcribe.WriteOptions{})
}

// RenderWith is Render with subtitle options (word
// cues).
func RenderWith(t store.Transcript, format string, o transcribe.WriteOptions) ([]byte, error) {
	if !slices.Contains(transcribe.Formats, format) {
		return nil, apierr.BadRequest(fmt.Errorf("unknown export format %q (want %s)", format, strings.Join(transcribe.Formats, ", ")))
	}
	var segs []transcribe.Segment
	if err := json.Unmarshal(t.Segments, &segs); err != nil {
		return nil, fmt.Errorf("transcript %d has unreadable segments: %w", t.ID, err)
	}
	var b bytes.Buffer
	r := &transcribe.Result{Text: t.Text, Segments: segs, Language: t.Language, Duration: t.Duration}
	if err := transcribe.WriteWith(&b, format, r, o); err != nil {
		if o.Words != "" {
			return nil, apierr.BadRequest(err)
		}
		return nil, fmt.Errorf("export %s as %s: %w", t.SourceName, format, err)
	}
	return b.Bytes(), nil
}

// ExportName is the file name for an export: the audio's name with the
// format's extension.
func ExportName(t store.Transcript, format string) string {
	base := strings.TrimSuffix(SafeName(t.SourceName), filepath.Ext(t.SourceName))
	if base == "" {
		base = fmt.Sprintf("transcript-%d", t.ID)
	}
	return base + "." + format
}

// Prompt frames the transcript for the chat model, one timed
// line per segment so answers can point at moments.
func Prompt(t store.Transcript) (string, error) {
	lines, err := Lines(t)
	if err != nil {
		return "", err
	}
	return Frame(t) + "Answer from the transcript; cite times as [m:ss] when it helps, and say so when the transcript does not contain the answer.\n\nTranscript:\n" +
		strings.Join(lines, "\n") + "\n", nil
}

// Frame says what the transcript is: the recording, its length
// and language, and how it was made.
func Frame(t store.Transcript) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user wants to talk about the transcript of the recording %q", t.SourceName)
	if t.Duration > 0 {
		fmt.Fprintf(&b, " (%s long", clockOf(t.Duration))
		if t.Language != "" {
			fmt.Fprintf(&b, ", language %s", t.Language)
		}
		b.WriteString(")")
	}
	b.WriteString(". It was made automatically with Whisper and may contain recognition mistakes. ")
	return b.String()
}

// Lines are the transcript's segments, one timed line each.
func Lines(t store.Transcript) ([]string, error) {
	var segs []transcribe.Segment
	if err := json.Unmarshal(t.Segments, &segs); err != nil {
		return nil, fmt.Errorf("transcript %d has unreadable segments: %w", t.ID, err)
	}
	var lines []string
	for _, sg := range segs {
		if text := strings.TrimSpace(sg.Text); text != "" {
			lines = append(lines, fmt.Sprintf("[%s] %s", clockOf(time.Duration(sg.StartSec*float64(time.Second))), text))
		}
	}
	if len(lines) == 0 {
		return nil, apierr.BadRequest(fmt.Errorf("the transcript of %s has no text to ask about", t.SourceName))
	}
	return lines, nil
}

// clockOf formats a position as m:ss or h:mm:ss.
func clockOf(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
