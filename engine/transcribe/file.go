package transcribe

import (
	"context"
	"errors"
	"fmt"

	"hark/engine/audio"
	"hark/engine/vad"
)

// TranscribeFile transcribes an audio file (any container engine/audio
// reads, resampled to 16 kHz mono) without holding it: memory stays flat
// however long the recording. The file is read twice: once to find the
// spectrogram's maximum (OpenAI's dynamic-range floor is taken over the
// whole recording; see ScanProgress), then window by window while
// decoding. The result is the same as Transcribe on the decoded samples.
// A damaged or truncated file is an error rather than a partial
// transcript; such errors come from engine/audio and name the file.
func (m *Model) TranscribeFile(ctx context.Context, path string, opt Options, onSegment func(Segment)) (*Result, error) {
	if opt.VAD != nil {
		return m.transcribeFileSpeech(ctx, path, opt, onSegment)
	}
	return m.transcribeFile(ctx, path, nil, opt, onSegment)
}

// transcribeFile transcribes the file, or with speech only its speech
// regions laid end to end (times are then on that timeline).
func (m *Model) transcribeFile(ctx context.Context, path string, speech *vad.Map, opt Options, onSegment func(Segment)) (*Result, error) {
	nMels := m.Whisper.Config.NMels
	st := &Stats{}
	samples, maxRaw, err := scanFile(ctx, path, nMels, speech, opt.ScanProgress, st)
	if err != nil {
		return nil, pathErr(path, err)
	}
	if samples == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoAudio)
	}
	frames, err := openMelStream(path, nMels, speech, samples, maxRaw, st)
	if err != nil {
		return nil, pathErr(path, err)
	}
	defer frames.Close()
	res, err := m.transcribe(ctx, frames, samples, opt, onSegment, st)
	if err != nil {
		return res, pathErr(path, err)
	}
	return res, nil
}

// pathErr names the file in err, unless engine/audio already did.
func pathErr(path string, err error) error {
	if fe := (*audio.FileError)(nil); errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
