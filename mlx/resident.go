package mlx

// Resident moves a's storage out of the garbage-collected heap, for arrays
// that live as long as a model: its weights. Go's collector lets garbage
// grow to the size of the live heap before it runs, so with weights on the
// heap a 300 MB model let every decode step write its activations to fresh,
// cold pages and kept RSS at twice the weights. Off the heap the weights
// count for nothing and the few MB of per-token garbage are reused while
// still in cache.
//
// The storage is returned to the system when the array and every view of
// it are freed; its owner must not free it while another goroutine still
// computes with it (models free their weights in Close, after generation
// has stopped). Backends without such memory, small arrays and shared
// storage are left as they are. Resident returns a.
func Resident(a *Array) *Array {
	a.check("Resident")
	if r, ok := a.backend.(ResidentMaker); ok {
		r.MakeResident(a)
	}
	return a
}
