package mlx

// MapFile makes an array whose storage is the bytes [offset,
// offset+size) of the file at path, mapped read-only and never copied: the
// weights of a model that reads only some of them per token (the experts
// of a mixture-of-experts layer) stay in the file and enter memory page
// by page as they are used, so the process's resident memory grows with
// the experts actually chosen rather than with the checkpoint. The bytes
// are little-endian elements of dt (the safetensors layout). ok is false
// when the backend cannot map (no FileMapper, a misaligned offset, a
// big-endian host, a failed mmap): the caller then copies the tensor as
// usual. The mapping is released when the array and its views are freed;
// the file must not be truncated while mapped.
func MapFile(path string, offset int64, dt DType, shape ...int) (a *Array, ok bool) {
	b := DefaultBackend()
	m, can := b.(FileMapper)
	if !can || offset < 0 {
		return nil, false
	}
	out := newArray(b, dt, shape)
	if !m.MapFile(out, path, offset) {
		out.Free()
		return nil, false
	}
	return out, true
}

// FileMapper is implemented by backends that can use a mapped file range
// as an array's storage (MapFile).
type FileMapper interface {
	// MapFile fills out from the file's bytes at offset, out.Size()
	// elements of out's dtype, or returns false having changed nothing.
	MapFile(out *Array, path string, offset int64) bool
}
