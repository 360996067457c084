//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkAMXPrefill runs the 0.5B model's projection shapes (fused
// q/k/v, o, fused gate/up, down) through the public matmuls with the AMX
// path on and off, alternating the two in one loop so both see the same
// machine: GFLOP/s of each and amx/f32, the speed-up, for bf16 and packed
// 4-bit weights, at the smallest batch it takes (amxMinM), 128 and 512.
func BenchmarkAMXPrefill(b *testing.B) {
	if !haveAMX {
		b.Skip("no AMX here")
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, sh := range [][2]int{{896, 1152}, {896, 896}, {896, 9728}, {4864, 896}} {
		k, n := sh[0], sh[1]
		// Normal weights: randHalf's subnormals would slow the float32
		// path down with microcode assists that real weights never hit.
		wh := make([]uint16, n*k)
		for i, v := range randSlice(r, n*k) {
			wh[i] = uint16(math.Float32bits(v) >> 16)
		}
		packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, 64, 4)
		if err != nil {
			b.Fatal(err)
		}
		pq, err := PackQ4(packed, scales, biases, n, k, 64, make([]byte, PackedQ4Bytes(n, k, 64)))
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"bf16", "q4"} {
			for _, m := range []int{32, 128, 512} {
				b.Run(fmt.Sprintf("%s/%dx%d/m=%d", f, k, n, m), func(b *testing.B) {
					x, out := randSlice(r, m*k), make([]float32, m*n)
					run := func() {
						var err error
						if f == "bf16" {
							err = HMatmul(x, m, k, n, wh, BF16, true, out)
						} else {
							err = PackedQ4Matmul(x, m, pq, out)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					// CPU seconds, not wall: on the shared machine they
					// swing far less with other load.
					var ta, tf float64
					for range b.N {
						c0 := processCPU()
						run()
						c1 := processCPU()
						haveAMX = false
						run()
						haveAMX = true
						ta, tf = ta+c1-c0, tf+processCPU()-c1
					}
					flop := 2 * float64(m*n*k) * float64(b.N)
					b.ReportMetric(flop/ta/1e9, "GFLOP/cpu-s-amx")
					b.ReportMetric(flop/tf/1e9, "GFLOP/cpu-s-f32")
					b.ReportMetric(tf/ta, "amx/f32")
				})
			}
		}
	}
}

// BenchmarkCeilingAMXBF16 is the AMX GEMM on 1024×1024 matrices with bf16
// weights (as BenchmarkCeilingSgemm, with W already bf16 and packed per
// call): the bf16 compute ceiling of prefill on CPUs with AMX, on
// GOMAXPROCS threads.
func BenchmarkCeilingAMXBF16(b *testing.B) {
	if !haveAMX {
		b.Skip("no AMX here")
	}
	const n = 1024
	r := rand.New(rand.NewPCG(1, 1))
	x, z, w := randSlice(r, n*n), make([]float32, n*n), make([]uint16, n*n)
	for i, v := range randSlice(r, n*n) {
		w[i] = uint16(math.Float32bits(v) >> 16)
	}
	wt := amxWeights{kind: amxBF16, wh: w}
	amxGemmT(x, n, n, n, wt, z)
	b.ResetTimer()
	for range b.N {
		amxGemmT(x, n, n, n, wt, z)
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
