//go:build !cgo

package cpu

var (
	qScores  = qScoresGo
	qValues  = qValuesGo
	qSoftmax = func(row []float32) { softmaxRowF32(row, row) }
)
