package audio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ffmpeg is the decoder of last resort for formats with no Go decoder
// (AAC/M4A, Opus, ...). It is optional: Hark never ships it.

// lookPath is swapped by tests to simulate a machine without ffmpeg.
var lookPath = exec.LookPath

// probeTimeout bounds ffprobe, which reads only headers.
const probeTimeout = 30 * time.Second

// needsFFmpeg is the error for a format only ffmpeg can decode here.
func needsFFmpeg(what string) error {
	hint := "apt-get install ffmpeg"
	osName := "Linux"
	switch runtime.GOOS {
	case "darwin":
		osName, hint = "this build", "brew install ffmpeg"
	case "windows":
		osName, hint = "Windows", "winget install ffmpeg"
	case "linux":
	default:
		osName = runtime.GOOS
	}
	return errorf(ErrNeedsTool, "%s needs ffmpeg on %s; install it (%s)", what, osName, hint)
}

// probeFFmpeg reads the format of the first audio stream with ffprobe, or
// by parsing what `ffmpeg -i` prints when ffprobe is missing.
func probeFFmpeg(path, what string) (FileInfo, error) {
	if probe, err := lookPath("ffprobe"); err == nil {
		return runFFprobe(probe, path)
	}
	ff, err := lookPath("ffmpeg")
	if err != nil {
		return FileInfo{}, needsFFmpeg(what)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ff, "-hide_banner", "-nostdin", "-i", fileURL(path))
	cmd.Stderr = &stderr
	_ = cmd.Run() // ffmpeg exits 1 when given no output; the banner is what we want
	return parseFFmpegBanner(stderr.String())
}

func runFFprobe(probe, path string) (FileInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, probe, "-v", "error", "-select_streams", "a:0",
		"-show_entries", "stream=codec_name,sample_rate,channels,duration,bits_per_raw_sample:format=format_name,duration",
		"-of", "json", fileURL(path))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return FileInfo{}, errorf(ErrCorrupt, "ffprobe cannot read it: %s", lastLine(stderr.String(), err))
	}
	var out struct {
		Streams []struct {
			Codec    string `json:"codec_name"`
			Rate     string `json:"sample_rate"`
			Channels int    `json:"channels"`
			Duration string `json:"duration"`
			Bits     string `json:"bits_per_raw_sample"`
		} `json:"streams"`
		Format struct {
			Name     string `json:"format_name"`
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return FileInfo{}, fmt.Errorf("parsing ffprobe output: %w", err)
	}
	if len(out.Streams) == 0 {
		return FileInfo{}, errorf(ErrEmpty, "the file has no audio stream")
	}
	st := out.Streams[0]
	rate, _ := strconv.Atoi(st.Rate)
	in := FileInfo{Codec: st.Codec, SampleRate: rate, Channels: st.Channels}
	in.BitsPerSample, _ = strconv.Atoi(st.Bits)
	dur := st.Duration
	if dur == "" || dur == "N/A" {
		dur = out.Format.Duration
	}
	in.setFrames(-1)
	if d, err := strconv.ParseFloat(dur, 64); err == nil && rate > 0 {
		in.setFrames(int64(math.Round(d * float64(rate))))
	}
	return in, checkFormat(in.SampleRate, in.Channels)
}

var (
	bannerAudio    = regexp.MustCompile(`Stream #\d+:\d+.*?: Audio: (\w+)[^,]*, (\d+) Hz, ([^,]+)`)
	bannerDuration = regexp.MustCompile(`Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)`)
	layoutChannels = map[string]int{"mono": 1, "stereo": 2, "2.1": 3, "3.0": 3, "3.0(back)": 3, "quad": 4, "quad(side)": 4, "4.0": 4,
		"4.1": 5, "5.0": 5, "5.0(side)": 5, "5.1": 6, "5.1(side)": 6, "6.0": 6, "6.1": 7, "7.0": 7, "7.1": 8, "7.1(wide)": 8}
	nChannels = regexp.MustCompile(`^(\d+) channels`)
)

// parseFFmpegBanner reads the stream line ffmpeg prints for its input, e.g.
// "Stream #0:0(und): Audio: aac (LC) (mp4a / 0x6134706D), 16000 Hz, mono, fltp".
func parseFFmpegBanner(s string) (FileInfo, error) {
	m := bannerAudio.FindStringSubmatch(s)
	if m == nil {
		return FileInfo{}, errorf(ErrCorrupt, "ffmpeg finds no audio stream: %s", lastLine(s, nil))
	}
	rate, _ := strconv.Atoi(m[2])
	layout := strings.TrimSpace(m[3])
	ch, ok := layoutChannels[layout]
	if !ok {
		if c := nChannels.FindStringSubmatch(layout); c != nil {
			ch, _ = strconv.Atoi(c[1])
		}
	}
	in := FileInfo{Codec: m[1], SampleRate: rate, Channels: ch}
	in.setFrames(-1)
	if d := bannerDuration.FindStringSubmatch(s); d != nil {
		h, _ := strconv.Atoi(d[1])
		mi, _ := strconv.Atoi(d[2])
		sec, _ := strconv.ParseFloat(d[3], 64)
		in.setFrames(int64(math.Round((float64(h*3600+mi*60) + sec) * float64(rate))))
	}
	return in, checkFormat(in.SampleRate, in.Channels)
}

// fileURL makes ffmpeg treat path as a local file whatever it looks like: a
// dropped file named "http:x.m4a" or "concat:a|b" must not become a URL.
func fileURL(path string) string { return "file:" + path }

func lastLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" && err != nil {
		return err.Error()
	}
	return s
}

// ffmpegSource streams raw float32 samples from an ffmpeg child process, at
// the file's own rate and channel count so channel picking and resampling
// work the same as for the Go decoders.
type ffmpegSource struct {
	cmd    *exec.Cmd
	out    io.ReadCloser
	br     *bufio.Reader
	stderr *tailBuffer
	in     FileInfo
	buf    []byte
	err    error
}

func newFFmpegSource(path string, in FileInfo) (*ffmpegSource, error) {
	ff, err := lookPath("ffmpeg")
	if err != nil {
		return nil, needsFFmpeg(in.Codec)
	}
	cmd := exec.Command(ff, "-nostdin", "-v", "error", "-i", fileURL(path), "-map", "0:a:0", "-vn",
		"-f", "f32le", "-acodec", "pcm_f32le",
		"-ac", strconv.Itoa(in.Channels), "-ar", strconv.Itoa(in.SampleRate), "-")
	s := &ffmpegSource{cmd: cmd, stderr: &tailBuffer{max: 4 << 10}, in: in}
	cmd.Stderr = s.stderr
	if s.out, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ffmpeg: %w", err)
	}
	s.br = bufio.NewReaderSize(s.out, 64<<10)
	return s, nil
}

func (s *ffmpegSource) info() FileInfo { return s.in }

func (s *ffmpegSource) read(dst []float32) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	ch := s.in.Channels
	frames := len(dst) / ch
	if cap(s.buf) < frames*ch*4 {
		s.buf = make([]byte, frames*ch*4)
	}
	buf := s.buf[:frames*ch*4]
	n, err := io.ReadFull(s.br, buf)
	n = n / (4 * ch) * (4 * ch) // ffmpeg only ever writes whole frames
	for i := range n / 4 {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	if err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			s.err = err
		} else if werr := s.cmd.Wait(); werr != nil {
			s.err = errorf(ErrCorrupt, "ffmpeg failed: %s", lastLine(s.stderr.String(), werr))
		} else {
			s.err = io.EOF
		}
		s.cmd = nil
		if n == 0 {
			return 0, s.err
		}
	}
	return n / 4, nil
}

// Close stops ffmpeg if the caller quits before the end.
func (s *ffmpegSource) Close() error {
	if s.cmd == nil {
		return nil
	}
	s.out.Close()
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	s.cmd.Wait()
	s.cmd = nil
	return nil
}

// tailBuffer keeps the last max bytes written: enough of ffmpeg's stderr to
// explain a failure without growing with a chatty run.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
