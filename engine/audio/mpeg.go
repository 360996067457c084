package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// mpegHeader is the part of an MPEG audio frame header Hark needs: enough to
// find the next frame and to report rate, channels and duration without
// decoding.
type mpegHeader struct {
	version    int // 1, 2, or 25 for MPEG-2.5
	layer      int // 1, 2, 3
	sampleRate int
	channels   int
	frameLen   int // bytes, header included
	samples    int // samples per channel in this frame
}

var mpegBitrates = [2][3][15]int{ // [v1, v2/2.5][layer-1][index] in kbit/s
	{
		{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
		{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
	},
	{
		{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
	},
}

var mpegRates = map[int][3]int{
	1:  {44100, 48000, 32000},
	2:  {22050, 24000, 16000},
	25: {11025, 12000, 8000},
}

// parseMPEGHeader decodes the 4-byte frame header at b[0:4]. Free-format
// bitrates (index 0) are rejected: no frame length can be derived, and they
// are vanishingly rare.
func parseMPEGHeader(b []byte) (mpegHeader, bool) {
	var h mpegHeader
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return h, false
	}
	switch (b[1] >> 3) & 3 {
	case 0:
		h.version = 25
	case 2:
		h.version = 2
	case 3:
		h.version = 1
	default:
		return h, false
	}
	h.layer = 4 - int((b[1]>>1)&3)
	if h.layer == 4 {
		return h, false
	}
	bi, si := int(b[2]>>4), int((b[2]>>2)&3)
	if bi == 0 || bi == 15 || si == 3 {
		return h, false
	}
	h.sampleRate = mpegRates[h.version][si]
	vi := 0
	if h.version != 1 {
		vi = 1
	}
	br := mpegBitrates[vi][h.layer-1][bi] * 1000
	pad := int(b[2]>>1) & 1
	switch h.layer {
	case 1:
		h.frameLen = (12*br/h.sampleRate + pad) * 4
		h.samples = 384
	case 2:
		h.frameLen = 144*br/h.sampleRate + pad
		h.samples = 1152
	case 3:
		if h.version == 1 {
			h.frameLen = 144*br/h.sampleRate + pad
			h.samples = 1152
		} else {
			h.frameLen = 72*br/h.sampleRate + pad
			h.samples = 576
		}
	}
	h.channels = 2
	if b[3]>>6 == 3 {
		h.channels = 1
	}
	return h, h.frameLen >= 4
}

// xingInfo is what a Xing/Info/VBRI header frame says. It decodes to
// silence and is metadata, not audio.
type xingInfo struct {
	ok bool
	// gapless: a LAME-style tag gave the encoder delay and end padding, in
	// samples, so the decoded stream can be trimmed to the original.
	gapless        bool
	delay, padding int
}

// parseXing reads the header frame of a Layer III stream, if it is one.
func parseXing(h mpegHeader, frame []byte) xingInfo {
	side := 32
	switch {
	case h.version == 1 && h.channels == 1:
		side = 17
	case h.version != 1 && h.channels == 2:
		side = 17
	case h.version != 1:
		side = 9
	}
	o := 4 + side
	if len(frame) < o+8 {
		return xingInfo{}
	}
	if tag := string(frame[o : o+4]); tag != "Xing" && tag != "Info" {
		return xingInfo{ok: len(frame) >= 40 && string(frame[36:40]) == "VBRI"}
	}
	x := xingInfo{ok: true}
	flags := binary.BigEndian.Uint32(frame[o+4:])
	p := o + 8
	for _, f := range []struct {
		bit  uint32
		size int
	}{{1, 4}, {2, 4}, {4, 100}, {8, 4}} {
		if flags&f.bit != 0 {
			p += f.size
		}
	}
	// The LAME extension (also written by ffmpeg as "Lavc"/"Lavf"): a
	// 9-byte encoder name, then 12 bytes, then delay and padding as two
	// 12-bit numbers.
	if len(frame) >= p+24 {
		enc := string(frame[p : p+4])
		if enc == "LAME" || enc == "Lavc" || enc == "Lavf" || enc == "L3.9" {
			b := frame[p+21:]
			x.delay = int(b[0])<<4 | int(b[1])>>4
			x.padding = int(b[1]&0x0F)<<8 | int(b[2])
			x.gapless = true
		}
	}
	return x
}

// mpegScan is what a header walk over a whole MPEG audio file finds.
type mpegScan struct {
	first     mpegHeader
	frames    int64 // audio frames, the Xing frame excluded
	samples   int64 // samples per channel in those frames
	xing      bool
	tag       xingInfo
	truncated bool // the last frame runs past the end of the file
}

// scanMPEG walks frame headers without decoding. Bytes that are not a frame
// header are skipped one by one (garbage between frames), and the walk stops
// at trailing tags. Frames whose rate differs from the first frame's are
// false syncs inside garbage and are skipped too.
func scanMPEG(r io.Reader) (mpegScan, error) {
	var s mpegScan
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(10); len(head) == 10 && string(head[:3]) == "ID3" {
		n := id3Size(head)
		if n == 0 {
			return s, errorf(ErrCorrupt, "malformed ID3 tag")
		}
		if d, err := br.Discard(n); err != nil {
			return s, errorf(ErrTruncated, "ID3 tag says %d bytes but the file ends after %d", n, d)
		}
	}
	const maxJunk = 1 << 20 // give up resyncing after this much garbage in a row
	junk := 0
	for {
		b, err := br.Peek(4)
		if len(b) < 4 {
			if err != nil && !errors.Is(err, io.EOF) {
				return s, err
			}
			break
		}
		if string(b[:3]) == "TAG" || string(b) == "APET" || string(b) == "LYRI" {
			break
		}
		h, ok := parseMPEGHeader(b)
		if ok && s.frames+boolInt(s.xing) > 0 && (h.sampleRate != s.first.sampleRate || h.layer != s.first.layer) {
			ok = false
		}
		if !ok {
			if junk++; junk > maxJunk {
				break
			}
			br.Discard(1)
			continue
		}
		junk = 0
		frame, _ := br.Peek(h.frameLen)
		if len(frame) < h.frameLen {
			s.truncated = true
			if s.frames == 0 && !s.xing {
				s.first = h
			}
			break
		}
		if s.frames == 0 && !s.xing {
			s.first = h
			if x := parseXing(h, frame); h.layer == 3 && x.ok {
				s.xing, s.tag = true, x
				br.Discard(h.frameLen)
				continue
			}
		}
		s.frames++
		s.samples += int64(h.samples)
		br.Discard(h.frameLen)
	}
	if s.frames == 0 {
		if s.truncated || s.xing {
			return s, errorf(ErrTruncated, "MPEG audio stream ends before its first complete frame")
		}
		return s, errorf(ErrCorrupt, "no MPEG audio frames found")
	}
	return s, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
