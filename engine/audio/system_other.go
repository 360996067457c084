//go:build !darwin || !cgo

package audio

// Without AudioToolbox, formats that have no Go decoder go through ffmpeg.

func systemInfo(path string, c Container, what string) (FileInfo, error) {
	in, err := probeFFmpeg(path, what)
	in.Container = c
	return in, err
}

func openSystem(path string, c Container, what string) (source, error) {
	in, err := systemInfo(path, c, what)
	if err != nil {
		return nil, err
	}
	return newFFmpegSource(path, in)
}
