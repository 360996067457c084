//go:build !cgo

package cpu

var qDecodeHead = qDecodeHeadGo
