package transcribe

import (
	"context"
	"fmt"

	"hark/engine/audio"
)

// TranscribeFile decodes an audio file (any container engine/audio reads,
// resampled to 16 kHz mono) and transcribes it. A damaged or truncated
// file is an error rather than a partial transcript.
func (m *Model) TranscribeFile(ctx context.Context, path string, opt Options, onSegment func(Segment)) (*Result, error) {
	samples, err := audio.Decode(path, audio.Options{})
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoAudio)
	}
	res, err := m.Transcribe(ctx, samples, opt, onSegment)
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}
