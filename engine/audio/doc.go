// Package audio turns a dropped audio file into what Whisper eats: 16 kHz
// mono float32 PCM, delivered as a stream so a three-hour recording never has
// to sit in memory.
//
// Use:
//
//	s, err := audio.Open(path, audio.Options{})  // 16 kHz, channels averaged
//	defer s.Close()
//	win := make([]float32, 30*audio.SampleRate)
//	for {
//		n, err := s.Next(win)                     // 0, io.EOF at the end
//		...
//	}
//
// Decode reads a whole (short) file the same way; Info describes a file
// from its headers without decoding it. Options.Channel picks one channel
// (1-based) instead of the average; Options.SampleRate changes the output
// rate.
//
// Containers are recognised by their magic bytes, never by the file name.
// WAV (PCM 8-32 bit, float 32/64, A-law, µ-law, extensible, RF64), FLAC,
// MP3 (gapless, from the LAME tag) and Ogg Vorbis are decoded in Go.
// Formats that need a licensed or complex codec (AAC/M4A, Opus, AIFF, CAF,
// MPEG Layer II, ...) go through the operating system: AudioToolbox's
// ExtAudioFile on macOS, an ffmpeg binary on PATH elsewhere; when neither
// exists the error says what to install. Resampling is a Kaiser-windowed
// sinc polyphase filter (error under -100 dB on a 1 kHz tone).
//
// Every error names the file it is about (see FileError) and belongs to one
// of the classes ErrUnknownFormat, ErrUnsupported, ErrBadHeader,
// ErrCorrupt, ErrTruncated, ErrEmpty or ErrNeedsTool. A truncated file
// still yields the samples before the cut. Decoding never panics:
// third-party decoders are called behind recover.
package audio
