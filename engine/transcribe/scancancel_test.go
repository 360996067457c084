package transcribe

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Cancellation reaches audio decoding (issue 17): the first pass over a
// file looks at the context before each second of audio it decodes, so a
// Stop in the middle of a long file ends it there, not at the end.
func TestScanStopsWhenCancelled(t *testing.T) {
	p := writeNoiseWAV(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls []time.Duration
	n, _, err := scanFile(ctx, p, 80, nil, func(done, _ time.Duration) {
		calls = append(calls, done)
		cancel() // a minute in, of three
	}, &Stats{})
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("%d samples, err %v; want context.Canceled", n, err)
	}
	if len(calls) != 1 || calls[0] != time.Minute {
		t.Fatalf("progress %v: decoding went on after the cancel", calls)
	}
}
