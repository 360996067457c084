package llm_test

import (
	"os"
	"strconv"
	"strings"
)

// residentBytes is the process's resident set size from /proc/self/statm.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// fileBytes is how much of the files in dir is resident in this
// process (the Rss of its mappings of them, from /proc/self/smaps): the
// pages of mapped weights that have been read, and any the kernel mapped
// with them (fault-around, large page-cache folios).
func fileBytes(dir string) int64 {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var n int64
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && strings.HasPrefix(f[5], dir+"/")
			continue
		}
		if in && len(f) == 3 && f[0] == "Rss:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				n += kb << 10
			}
		}
	}
	return n
}

// anonBytes is the process's anonymous resident memory (RssAnon in
// /proc/self/status): the weights held in memory, the KV cache, the heap.
func anonBytes() int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
