//go:build !linux

package llm_test

import (
	"errors"
	"time"
)

// evictFile: only Linux drops one file's pages on request.
func evictFile(string) error { return errors.New("not supported on this OS") }

// cpuTime is not measured here: 0.
func cpuTime() time.Duration { return 0 }
