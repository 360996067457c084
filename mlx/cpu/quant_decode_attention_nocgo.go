//go:build !cgo

package cpu

var (
	qScores  = qScoresGo
	qValues  = qValuesGo
	qSoftmax = func(row []float32) { softmaxRowF32(row, row) }
)

// q512: the AVX-512 loops need cgo.
func q512(d int) bool { return false }

// qVNNI, qDot: the int8 loops need cgo.
var qVNNI, qVNNIOK = false, false

func qDot(d int) bool { return false }

func qDotValues(dv, g, bits int) bool { return false }

// qSoftmaxLSE, qSoftmaxExp, qValuesScaled: never called without cgo
// (q512 is false).
func qSoftmaxLSE(row []float32) (float32, bool) { return 0, false }

func qSoftmaxExp(row []float32) (float32, float32, bool) { return 0, 0, false }

func qValuesScaled(p []float32, rep, dv, n, g, bits int, vp []uint32, vs, vb, row, o, _ []float32) {
	qValuesGo(p, rep, dv, n, g, bits, vp, vs, vb, row, o)
}

func qScoresThen(q []float32, rep, d, n, g, bits int, scale float32, kp []uint32, ks, kb, row, sc []float32, _ []uint32, _ bool) {
	qScoresGo(q, rep, d, n, g, bits, scale, kp, ks, kb, row, sc)
}
