//go:build amd64 || arm64

// Package goid identifies the calling goroutine cheaply. It lives apart
// from package mlx because a package using cgo cannot hold Go assembly.
package goid

// Current returns the address of the calling goroutine's runtime
// descriptor. It only serves as a key: descriptors are never freed or
// moved, and no two live goroutines share one (a descriptor is reused only
// after its goroutine exits). Reading it is a single load, cheap enough
// for every array creation, where parsing runtime.Stack costs microseconds.
func Current() uintptr
