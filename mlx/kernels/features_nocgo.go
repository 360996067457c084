//go:build !cgo

package kernels

// Features reports the CPU features and backends the kernels use. Without
// cgo everything runs in portable Go.
func Features() string { return "cpu: not probed (cgo disabled); sgemm: go; qmatmul: go" }
