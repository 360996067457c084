//go:build !cgo

package cpu

var (
	qScores = qScoresGo
	qValues = qValuesGo
)
