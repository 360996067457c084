//go:build unix

package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// instanceLock holds an flock on hark.lock in the data dir for the life of
// the process. The kernel drops it when the process dies, even by SIGKILL,
// so a crash never leaves a stale lock behind.
type instanceLock struct{ f *os.File }

// ErrAlreadyRunning is returned when another Hark holds the lock.
var ErrAlreadyRunning = errors.New("Hark is already running")

func acquireLock(dir string) (*instanceLock, error) {
	path := filepath.Join(dir, "hark.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 64)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		info := strings.TrimSpace(string(b[:n]))
		if pid, err := strconv.Atoi(strings.Fields(info + " 0")[0]); err == nil && pid > 0 {
			return nil, fmt.Errorf("%w (pid %d, data folder %s)", ErrAlreadyRunning, pid, dir)
		}
		return nil, fmt.Errorf("%w (data folder %s)", ErrAlreadyRunning, dir)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &instanceLock{f: f}, nil
}

func (l *instanceLock) release() {
	if l != nil && l.f != nil {
		syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}
