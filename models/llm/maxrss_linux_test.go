package llm_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
)

// peakRSS is this process's peak resident set in bytes: VmHWM, which
// belongs to the process's own address space. getrusage's ru_maxrss would
// not do in the benchmark's child: Linux carries the parent's peak across
// fork and exec into it.
func peakRSS(t testing.TB) int64 {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(st, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// rssBreakdown is the resident set's parts (anonymous memory, mapped
// files), for the log.
func rssBreakdown() string {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, line := range bytes.Split(st, []byte("\n")) {
		for _, k := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if bytes.HasPrefix(line, []byte(k)) {
				parts = append(parts, strings.Join(strings.Fields(string(line)), " "))
			}
		}
	}
	return strings.Join(parts, ", ")
}
