package safetensors

// Prefetch starts reading the whole file into the page cache in the
// background, for a loader that is about to read every tensor: on a cold
// cache the disk then streams the file once, ahead of the first touches,
// instead of serving them one readahead window at a time. Advice only.
func (f *File) Prefetch() {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.closed {
		prefetchPages(f.data)
	}
}

// Prefetch is File.Prefetch on every shard.
func (s *Set) Prefetch() {
	for _, f := range s.files {
		f.Prefetch()
	}
}
