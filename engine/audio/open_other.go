//go:build !unix

package audio

import "os"

// openAudio opens path for reading (named pipes do not block an open here).
func openAudio(path string) (*os.File, error) { return os.Open(path) }
