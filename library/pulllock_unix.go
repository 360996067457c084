//go:build unix

package library

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockBlob takes the lock huggingface_hub takes around a blob download,
// .locks/<repo folder>/<etag>.lock under flock, so Hark and the Python
// tools never write the same .incomplete file at once. waiting is called
// once if another process holds it.
func lockBlob(ctx context.Context, cache, repoFolder, etag string, waiting func()) (func(), error) {
	dir := filepath.Join(cache, ".locks", repoFolder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, etag+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		if !told {
			told = true
			waiting()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// blobLocked reports whether a download holds the lock of blob etag in
// repoFolder: a .incomplete blob whose lock nobody holds is what a killed
// or cancelled download left behind, to be resumed, not one arriving.
func blobLocked(cache, repoFolder, etag string) bool {
	f, err := os.Open(filepath.Join(cache, ".locks", repoFolder, etag+".lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
