//go:build darwin && cgo

package audio

// On macOS, formats without a Go decoder (AAC/M4A, ALAC, AIFF, CAF, ...) are
// decoded by AudioToolbox's ExtAudioFile, which ships with the OS. The file
// is converted to packed interleaved float32 at its own rate and channel
// count; mixing and resampling then happen in Go like for every format.
// If AudioToolbox cannot open the file and ffmpeg is installed, ffmpeg is
// tried as well.

/*
#cgo LDFLAGS: -framework AudioToolbox -framework CoreFoundation
#include <AudioToolbox/AudioToolbox.h>
#include <CoreFoundation/CoreFoundation.h>
#include <stdlib.h>
#include <string.h>

static OSStatus hark_open(const char *path, ExtAudioFileRef *out) {
	CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL,
		(const UInt8 *)path, (CFIndex)strlen(path), false);
	if (url == NULL) {
		return kAudioFileUnspecifiedError;
	}
	OSStatus st = ExtAudioFileOpenURL(url, out);
	CFRelease(url);
	return st;
}

// hark_setup reports the file's format and length and asks ExtAudioFile to
// hand out float32 interleaved frames at that same rate and channel count.
static OSStatus hark_setup(ExtAudioFileRef f, double *rate, UInt32 *channels,
		SInt64 *frames, UInt32 *formatID, UInt32 *bits) {
	AudioStreamBasicDescription file;
	memset(&file, 0, sizeof(file));
	UInt32 size = sizeof(file);
	OSStatus st = ExtAudioFileGetProperty(f, kExtAudioFileProperty_FileDataFormat, &size, &file);
	if (st != noErr) {
		return st;
	}
	*rate = file.mSampleRate;
	*channels = file.mChannelsPerFrame;
	*formatID = file.mFormatID;
	*bits = file.mBitsPerChannel;
	SInt64 n = -1;
	size = sizeof(n);
	if (ExtAudioFileGetProperty(f, kExtAudioFileProperty_FileLengthFrames, &size, &n) != noErr) {
		n = -1;
	}
	*frames = n;
	if (file.mChannelsPerFrame == 0 || file.mSampleRate <= 0) {
		return kAudioFileInvalidFileError;
	}
	AudioStreamBasicDescription client;
	memset(&client, 0, sizeof(client));
	client.mSampleRate = file.mSampleRate;
	client.mFormatID = kAudioFormatLinearPCM;
	client.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked;
	client.mChannelsPerFrame = file.mChannelsPerFrame;
	client.mBitsPerChannel = 32;
	client.mFramesPerPacket = 1;
	client.mBytesPerFrame = 4 * file.mChannelsPerFrame;
	client.mBytesPerPacket = client.mBytesPerFrame;
	return ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof(client), &client);
}

// hark_read decodes up to *frames frames into dst; *frames becomes the
// number read, 0 at the end of the file.
static OSStatus hark_read(ExtAudioFileRef f, float *dst, UInt32 channels, UInt32 *frames) {
	AudioBufferList list;
	list.mNumberBuffers = 1;
	list.mBuffers[0].mNumberChannels = channels;
	list.mBuffers[0].mDataByteSize = *frames * channels * (UInt32)sizeof(float);
	list.mBuffers[0].mData = dst;
	return ExtAudioFileRead(f, frames, &list);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

type extAudioSource struct {
	ref C.ExtAudioFileRef
	in  FileInfo
}

// osStatus renders an OSStatus, as its four-character code when it is one.
func osStatus(st C.OSStatus) string {
	u := uint32(st)
	b := []byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("OSStatus %d", int32(st))
		}
	}
	return fmt.Sprintf("OSStatus '%s'", b)
}

func fourCC(u uint32) string {
	b := []byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
	return strings.TrimSpace(string(b))
}

func openExtAudio(path string, c Container) (*extAudioSource, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var ref C.ExtAudioFileRef
	if st := C.hark_open(cpath, &ref); st != 0 {
		return nil, errorf(ErrUnsupported, "macOS AudioToolbox cannot open it (%s)", osStatus(st))
	}
	var rate C.double
	var channels, formatID, bits C.UInt32
	var frames C.SInt64
	if st := C.hark_setup(ref, &rate, &channels, &frames, &formatID, &bits); st != 0 {
		C.ExtAudioFileDispose(ref)
		return nil, errorf(ErrCorrupt, "macOS AudioToolbox cannot decode it (%s)", osStatus(st))
	}
	in := FileInfo{Container: c, Codec: mp4Codec(fourCC(uint32(formatID))), SampleRate: int(rate), Channels: int(channels), BitsPerSample: int(bits)}
	in.setFrames(int64(frames))
	if err := checkFormat(in.SampleRate, in.Channels); err != nil {
		C.ExtAudioFileDispose(ref)
		return nil, err
	}
	return &extAudioSource{ref: ref, in: in}, nil
}

func (s *extAudioSource) info() FileInfo { return s.in }

func (s *extAudioSource) read(dst []float32) (int, error) {
	ch := s.in.Channels
	frames := len(dst) / ch
	if frames == 0 {
		return 0, nil
	}
	n := C.UInt32(frames)
	if st := C.hark_read(s.ref, (*C.float)(unsafe.Pointer(&dst[0])), C.UInt32(ch), &n); st != 0 {
		return 0, errorf(ErrCorrupt, "macOS AudioToolbox decoding failed (%s)", osStatus(st))
	}
	if n == 0 {
		return 0, io.EOF
	}
	return int(n) * ch, nil
}

func (s *extAudioSource) Close() error {
	if s.ref != nil {
		C.ExtAudioFileDispose(s.ref)
		s.ref = nil
	}
	return nil
}

func systemInfo(path string, c Container, what string) (FileInfo, error) {
	s, err := openExtAudio(path, c)
	if err != nil {
		if _, lerr := lookPath("ffmpeg"); lerr == nil {
			in, ferr := probeFFmpeg(path, what)
			in.Container = c
			return in, ferr
		}
		return FileInfo{}, withFFmpegHint(err, what)
	}
	defer s.Close()
	return s.in, nil
}

// withFFmpegHint tells the user how to read what AudioToolbox cannot (Ogg
// Opus, Matroska, ...).
func withFFmpegHint(err error, what string) error {
	var d *detail
	if errors.As(err, &d) {
		return errorf(d.kind, "%s; installing ffmpeg (brew install ffmpeg) lets Hark read %s", d.msg, what)
	}
	return err
}

func openSystem(path string, c Container, what string) (source, error) {
	s, err := openExtAudio(path, c)
	if err != nil {
		if _, lerr := lookPath("ffmpeg"); lerr == nil {
			in, ferr := probeFFmpeg(path, what)
			if ferr != nil {
				return nil, ferr
			}
			in.Container = c
			return newFFmpegSource(path, in)
		}
		return nil, withFFmpegHint(err, what)
	}
	return s, nil
}
