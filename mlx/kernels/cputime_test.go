//go:build cgo && harktune

package kernels

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func measure(f func(), reps int) (cpu, wall time.Duration) {
	f()
	c0, w0 := cpuTime(), time.Now()
	for i := 0; i < reps; i++ {
		f()
	}
	return (cpuTime() - c0) / time.Duration(reps), time.Since(w0) / time.Duration(reps)
}

func TestCPUTimeTune(t *testing.T) {
	type gemmFn = func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)
	for _, n := range []int{512, 2048} {
		x, y, z := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		for i := range x {
			x[i], y[i] = float32(i%7), float32(i%5)
		}
		for _, impl := range []struct {
			name string
			f    gemmFn
		}{{"blas", blasSgemm}, {"avx512", sgemmAVX512}, {"avx2", sgemmAVX2}} {
			reps := 20
			if n == 2048 {
				reps = 3
			}
			cpu, wall := measure(func() { impl.f(false, false, n, n, n, 1, x, n, y, n, 0, z, n) }, reps)
			fl := 2 * float64(n*n) * float64(n)
			fmt.Printf("%-7s n=%4d  %.1f GFLOP per CPU-s (x2 cores = %.0f)  wall %.1f GFLOP/s\n", impl.name, n, fl/cpu.Seconds()/1e9, 2*fl/cpu.Seconds()/1e9, fl/wall.Seconds()/1e9)
		}
	}
}

func TestCPUTimeQMM(t *testing.T) {
	k, n := 4096, 4096
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%97)*0.01 - 0.3
	}
	p, s, bi, _ := Quantize(w, n, k, 64, 4)
	q := qmat{p, s, bi, 64, 4}
	for _, m := range []int{1, 8, 16, 32, 64, 128} {
		x, out := make([]float32, m*k), make([]float32, m*n)
		c1, w1 := measure(func() { qmatmulTC(x, m, k, n, q, out, 0) }, 3)
		c2, w2 := measure(func() { qmatmulDequantT(x, m, k, n, q, out) }, 3)
		fmt.Printf("m=%3d direct cpu %6.1fms wall %6.1fms | dequant+sgemm cpu %6.1fms wall %6.1fms\n", m, c1.Seconds()*1e3, w1.Seconds()*1e3, c2.Seconds()*1e3, w2.Seconds()*1e3)
	}
}
