//go:build unix

package cpu

import (
	"os"
	"syscall"
)

// mapFileRange maps n bytes of path at offset read-only and returns them
// (data) and the whole mapping (from the page boundary below offset), for
// unmap; nils on any failure. The mapping is shared: its pages are the
// page cache's, so they cost the process nothing until read, and the
// system can drop them again under pressure.
func mapFileRange(path string, offset int64, n int) (data, mapping []byte) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close() // the mapping outlives the descriptor
	st, err := f.Stat()
	if err != nil || offset+int64(n) > st.Size() {
		return nil, nil
	}
	page := int64(os.Getpagesize())
	base := offset / page * page
	mapping, err = syscall.Mmap(int(f.Fd()), base, int(offset-base)+n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	return mapping[offset-base : offset-base+int64(n) : offset-base+int64(n)], mapping
}
