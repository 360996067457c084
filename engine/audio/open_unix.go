//go:build unix

package audio

import (
	"os"
	"syscall"
)

// openAudio opens path for reading. A named pipe is opened non-blocking:
// a plain open waits, unkillable, for a writer that may never come (hark
// audio info on a FIFO hung). With no writer the read then sees an empty
// file; one already writing (a shell's <(...)) streams as usual, since Go
// waits for pipe data in its poller.
func openAudio(path string) (*os.File, error) {
	flag := os.O_RDONLY
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		flag |= syscall.O_NONBLOCK
	}
	return os.OpenFile(path, flag, 0)
}
