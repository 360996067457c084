//go:build !linux

package engine

// Outside Linux the process figures are not read: 0, unknown.
func processMemory() (rss, anon, file, peak int64) { return 0, 0, 0, 0 }

func mappedFileRSS([]string) int64 { return 0 }
