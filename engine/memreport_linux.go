package engine

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// processMemory reads this process's resident set (VmRSS, its RssAnon and
// RssFile parts) and peak (VmHWM) from /proc/self/status.
func processMemory() (rss, anon, file, peak int64) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, 0, 0
	}
	for _, line := range bytes.Split(st, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, anon, file, peak
}

// mappedFileRSS is how much of files is resident through this process's
// mappings of them (the Rss of those mappings in /proc/self/smaps).
func mappedFileRSS(files []string) int64 {
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
		if r, err := realPath(f); err == nil {
			want[r] = true
		}
	}
	fh, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer fh.Close()
	var n int64
	in := false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && want[strings.Join(f[5:], " ")]
			continue
		}
		if in && len(f) == 3 && f[0] == "Rss:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				n += kb << 10
			}
		}
	}
	return n
}
