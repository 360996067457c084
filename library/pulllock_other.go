//go:build !unix

package library

import "context"

// lockBlob is a no-op where flock does not exist; concurrent pulls of the
// same blob are then caught by the hash check instead.
func lockBlob(ctx context.Context, cache, repoFolder, etag string, waiting func()) (func(), error) {
	return func() {}, nil
}

// blobLocked cannot tell an active download from a stale one without
// flock: a .incomplete blob counts as arriving.
func blobLocked(cache, repoFolder, etag string) bool { return true }
