package cpu

import (
	"bufio"
	"fmt"
	"os"
	"testing"
	"unsafe"
)

// Mappings of 2 MB or more start on a huge-page boundary, smaller ones
// are plain, and unmap releases the mapping: its data is no longer mapped.
func TestMapAnonHugeAlignment(t *testing.T) {
	for _, n := range []int{4096, 100_000, hugePage, 3*hugePage + 12345} {
		data, mapping := mapAnon(n)
		if data == nil {
			t.Fatalf("mapAnon(%d) failed", n)
		}
		if len(data) != n || cap(data) != n {
			t.Fatalf("mapAnon(%d): len %d cap %d", n, len(data), cap(data))
		}
		at := uintptr(unsafe.Pointer(&data[0]))
		if n >= hugePage && at%hugePage != 0 {
			t.Errorf("mapAnon(%d) starts at %#x, not on a 2 MB boundary", n, at)
		}
		data[0], data[n-1] = 1, 2 // writable end to end
		if !mapped(t, at) {
			t.Fatalf("mapAnon(%d): %#x not in /proc/self/maps", n, at)
		}
		if err := unmap(mapping); err != nil {
			t.Fatalf("unmap after mapAnon(%d): %v", n, err)
		}
		if mapped(t, at) {
			t.Errorf("mapAnon(%d): %#x still mapped after unmap", n, at)
		}
	}
}

// mapped reports whether /proc/self/maps lists a mapping holding p.
func mapped(t *testing.T, p uintptr) bool {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(sc.Text(), "%x-%x", &lo, &hi); err == nil && lo <= p && p < hi {
			return true
		}
	}
	return false
}
