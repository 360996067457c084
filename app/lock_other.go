//go:build !unix

package app

import "errors"

// ErrAlreadyRunning is returned when another Hark holds the lock.
var ErrAlreadyRunning = errors.New("Hark is already running")

// On platforms without flock Hark runs without the single-instance guard;
// SQLite's own locking still keeps the database consistent.
type instanceLock struct{}

func acquireLock(dir string) (*instanceLock, error) { return &instanceLock{}, nil }

func (l *instanceLock) release() {}
