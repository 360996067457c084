package mlx

// The kit for backend authors. A backend lives in its own package beside
// this one (mlx/cpu, mlx/mlxc) and registers itself with RegisterBackend;
// these are the only hooks it gets into an Array. Model code never needs
// them.

// NewArray makes an unmaterialised array of the given shape and dtype on
// backend b. Backends use it for arrays an op of theirs returns (the
// capability interfaces below); the package's own ops allocate their
// outputs before calling the backend.
func NewArray(b Backend, dt DType, shape []int) *Array { return newArray(b, dt, shape) }

// Storage is the backend's storage for a (nil before the backend fills it).
// Only a's backend may interpret it.
func (a *Array) Storage() any { return a.st }

// SetStorage sets the backend's storage for a; the backend's Free
// releases it.
func (a *Array) SetStorage(st any) { a.st = st }

// Dims is a's shape without a copy, for backends in their hot loops. The
// slice belongs to the array: never modify it.
func (a *Array) Dims() []int { return a.shape }

// ShapeSize is the number of elements of shape s.
func ShapeSize(s []int) int { return shapeSize(s) }

// RowStrides are the element strides of a row-major array of shape s.
func RowStrides(s []int) []int { return rowStrides(s) }

// DeviceInfo is what a backend says about the device it computes on, for
// the choice of backend and for `hark doctor`.
type DeviceInfo struct {
	// Device is "cpu" or "gpu".
	Device string
	// GPU is true when the backend computes on a GPU (Metal).
	GPU bool
	// Library is the path of the shared library the backend loaded, if
	// any, and Version its version.
	Library, Version string
	// Detail is a free-form line: CPU features, the GPU's name.
	Detail string
}

// Describer is implemented by backends that can describe their device.
type Describer interface {
	Describe() DeviceInfo
}

// Capability interfaces: optional fast paths. The package's ops use them
// when the inputs' backend implements them and compose the result from
// the required Backend methods otherwise, so a new backend is correct
// before it is fast.

// QuantPacker is implemented by backends with a layout of their own for
// quantized matrices (QuantMatrix).
type QuantPacker interface {
	// PackQuant returns the packed storage of a [rows, cols] matrix, or
	// nil when the backend keeps MLX's layout for it.
	PackQuant(wq, scales, biases *Array, rows, cols, groupSize, bits int) *Array
	// PackedMatmul fills out ([..., rows]) with x ([..., cols]) @ Wᵀ.
	PackedMatmul(x *Array, packed *Array, rows, cols, groupSize, bits int, out *Array)
	// PackedRows fills out (idx.shape + [cols], float32) with the
	// dequantized rows idx, or every row when idx is nil.
	PackedRows(packed *Array, rows, cols, groupSize, bits int, idx *Array, out *Array)
}

// DecodeAttender is implemented by backends with a fused DecodeAttention.
// It returns the [B, 1, Heads*HeadDim] result, or nil (having changed
// nothing) when it does not handle these arrays, and DecodeAttention then
// composes the result from the other ops.
type DecodeAttender interface {
	DecodeAttention(qkv, keys, values *Array, pos int, p DecodeAttentionParams) *Array
}

// BiasAdder is implemented by backends that can add a bias along the last
// axis of an array in that array's own storage. Linear uses it on its fresh
// matmul output, which nothing else references, so a layer holds one
// output buffer instead of two (Whisper's encoder MLP: 12 MB each). It
// returns false, having changed nothing, when it cannot.
type BiasAdder interface {
	AddBiasInPlace(y, bias *Array) bool
}

// ResidentMaker is implemented by backends that can move an array's
// storage out of the garbage-collected heap (Resident).
type ResidentMaker interface {
	MakeResident(a *Array)
}

// ScratchReleaser is implemented by backends that keep freed scratch
// buffers for reuse outside any allocator cache MemoryManager reports
// (the CPU backend's large-buffer free lists).
type ScratchReleaser interface {
	// ReleaseScratch lets go of the kept buffers and returns their bytes.
	ReleaseScratch() int64
}

// ResidentLoader is implemented by backends that can fill an array from
// little-endian bytes directly into resident memory (ResidentFromBytes).
type ResidentLoader interface {
	// FromBytesResident fills out from raw as FromBytes does, or returns
	// false (having changed nothing) when it has no such memory for it.
	FromBytesResident(out *Array, raw []byte) bool
}

// XRounder is implemented by backends whose quantized matmuls round x
// (to int8 per group, as llama.cpp's Q4 x Q8 products do) for batches of
// at least RoundXMinRows rows: prompt chunks, never decode.
type XRounder interface {
	// RoundXMinRows is the fewest rows of x that may be rounded.
	RoundXMinRows() int
	// SetRoundX turns the rounding on or off for the process and returns
	// what restores the previous setting.
	SetRoundX(on bool) (restore func())
}

// KVRounder is implemented by backends whose decode attention over a
// quantized KV cache rounds its float operands (q to int8 per group, the
// attention weights to int16 per block) for integer dot products, as
// llama.cpp does for its q8_0 cache.
type KVRounder interface {
	// SetRoundKV turns the rounding on or off for the process and returns
	// what restores the previous setting.
	SetRoundKV(on bool) (restore func())
}

// MemoryManager is implemented by backends that hold device memory of
// their own outside Go's heap accounting (MLX's allocator), so that the
// engine's memory guard can read and bound it.
type MemoryManager interface {
	// ActiveMemory is the bytes held by live arrays, CacheMemory the
	// bytes the allocator keeps for reuse.
	ActiveMemory() int64
	CacheMemory() int64
	// SetMemoryLimit bounds what the backend may hold, SetCacheLimit
	// what it keeps cached; both take bytes.
	SetMemoryLimit(bytes int64)
	SetCacheLimit(bytes int64)
	// ClearCache returns cached memory to the system (a model unloaded).
	ClearCache()
}
