//go:build !amd64 && !arm64

// Package goid identifies the calling goroutine cheaply. It lives apart
// from package mlx because a package using cgo cannot hold Go assembly.
package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

// Current identifies the calling goroutine by the id in its stack header
// ("goroutine 17 [running]:"). Slow, but only ports without the one-load
// assembly version use it.
func Current() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return uintptr(id)
}
