package mlx

// Device memory: a backend with an allocator of its own (MLX keeps freed
// buffers in a cache for reuse) holds memory that the operating system
// counts as used. These let the engine see and bound it without knowing
// which backend runs; on backends without one (cpu) they do nothing.

func memoryManager() MemoryManager {
	mm, _ := DefaultBackend().(MemoryManager)
	return mm
}

// DeviceMemory is what the current backend's allocator holds: in live
// arrays, and cached for reuse. Both are 0 on backends without one.
func DeviceMemory() (active, cached int64) {
	if mm := memoryManager(); mm != nil {
		return mm.ActiveMemory(), mm.CacheMemory()
	}
	return 0, 0
}

// LimitDeviceMemory bounds the current backend's allocator: total bytes
// in all, of which at most cache stay cached. Values <= 0 leave that limit
// as it is.
func LimitDeviceMemory(total, cache int64) {
	mm := memoryManager()
	if mm == nil {
		return
	}
	if total > 0 {
		mm.SetMemoryLimit(total)
	}
	if cache > 0 {
		mm.SetCacheLimit(cache)
	}
}

// ReleaseDeviceMemory returns the allocator's cached memory to the system:
// call it when a model unloads.
func ReleaseDeviceMemory() {
	if mm := memoryManager(); mm != nil {
		mm.ClearCache()
	}
}

// ReleaseScratch lets go of the scratch buffers the current backend keeps
// for reuse (ScratchReleaser) and returns their bytes, 0 when it keeps
// none. Call it after a prefill: its tens of MB of activations would
// otherwise stay through the whole decode.
func ReleaseScratch() int64 {
	if r, ok := DefaultBackend().(ScratchReleaser); ok {
		return r.ReleaseScratch()
	}
	return 0
}
