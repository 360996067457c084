package cli

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// systemMemory reads MemTotal and MemAvailable (free plus what the kernel
// can reclaim) from /proc/meminfo; 0 for what it cannot read.
func systemMemory() (total, available int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "MemTotal:":
			total = kb << 10
		case "MemAvailable:":
			available = kb << 10
		}
	}
	return total, available
}
