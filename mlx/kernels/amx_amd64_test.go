//go:build cgo

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"
)

// amxTol is the error bound of the AMX GEMM relative to Σ|x·w| (the mag of
// the float64 references): x is rounded to bf16, whose 8-bit significand
// has unit roundoff 2^-8, a weight that is not already bf16 is rounded too
// (another 2^-8, and their product 2^-16), and the tiles sum the exact
// bf16 products in float32, adding at most about k·2^-24 (each of the k
// additions rounds once; measured with bf16-exact x: under 2^-22 of Σ|x·w|).
func amxTol(k int, weightRounded bool) float64 {
	tol := math.Ldexp(1, -8) + float64(k)*math.Ldexp(1, -24)
	if weightRounded {
		tol += math.Ldexp(1, -8) + math.Ldexp(1, -16)
	}
	return tol
}

// amxShapes have tails in every dimension: m not a multiple of the 32-row
// block (and under one block's worth past it), n not a multiple of the
// 32-column panel (and under 16, a half-empty panel), k not a multiple of
// the 32-value tile step, odd (a pair split by the end of a row), and over
// several 512-value k blocks.
var amxShapes = [][3]int{{32, 32, 32}, {33, 64, 40}, {45, 37, 7}, {64, 1100, 96}, {97, 129, 70}, {40, 1536, 33}}

func needAMX(t *testing.T) {
	t.Helper()
	if !haveAMX {
		t.Skip("no AMX here (CPU or kernel permission): the AMX kernels do not run")
	}
}

// nanOut is an output buffer the kernel must overwrite everywhere.
func nanOut(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(math.NaN())
	}
	return out
}

func TestAMXGemmBF16(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(19, 20))
	for _, sh := range amxShapes {
		m, k, n := sh[0], sh[1], sh[2]
		name := fmt.Sprintf("bf16_m%d_k%d_n%d", m, k, n)
		w := randHalf(r, n*k, BF16)
		x := randSlice(r, m*k)
		out := nanOut(m * n)
		amxGemmT(x, m, k, n, amxWeights{kind: amxBF16, wh: w}, out)
		want, mag := refHMatmul(x, m, k, n, w, BF16, true)
		assertClose(t, name, out, want, mag, amxTol(k, false))
	}
}

func TestAMXGemmQuant(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(19, 21))
	for _, bits := range []int{2, 4, 8} {
		for _, gs := range []int{32, 64, 128} {
			for _, sh := range [][3]int{{32, 128, 32}, {45, 640, 45}, {33, 256, 7}, {100, 1536, 70}} {
				m, k, n := sh[0], sh[1], sh[2]
				name := fmt.Sprintf("b%d_g%d_m%d_k%d_n%d", bits, gs, m, k, n)
				w, x := randSlice(r, n*k), randSlice(r, m*k)
				packed, scales, biases, err := Quantize(w, n, k, gs, bits)
				if err != nil {
					t.Fatal(name, err)
				}
				out := nanOut(m * n)
				if !amxQOK(k, gs, bits) {
					t.Fatalf("%s: AMX declines a supported format", name)
				}
				amxGemmT(x, m, k, n, amxWeights{kind: amxQ, q: qmat{packed, scales, biases, gs, bits}}, out)
				want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, bits, true)
				assertClose(t, name, out, want, mag, amxTol(k, true))
			}
		}
	}
}

func TestAMXGemmPackedQ4(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(19, 22))
	for _, gs := range []int{64, 128} {
		for _, sh := range [][3]int{{32, 128, 32}, {45, 640, 45}, {33, 256, 7}, {100, 1152, 97}} {
			m, k, n := sh[0], sh[1], sh[2]
			name := fmt.Sprintf("g%d_m%d_k%d_n%d", gs, m, k, n)
			w, x := randSlice(r, n*k), randSlice(r, m*k)
			packed, scales, biases, err := Quantize(w, n, k, gs, 4)
			if err != nil {
				t.Fatal(name, err)
			}
			p, err := PackQ4(packed, scales, biases, n, k, gs, make([]byte, PackedQ4Bytes(n, k, gs)))
			if err != nil {
				t.Fatal(name, err)
			}
			out := nanOut(m * n)
			if !amxQOK(k, gs, 4) {
				t.Fatalf("%s: AMX declines a supported format", name)
			}
			amxGemmT(x, m, k, n, amxWeights{kind: amxPQ4, pq: p.Data, gs: gs}, out)
			want, mag := refQMatmul(x, m, k, n, packed, scales, biases, gs, 4, true)
			assertClose(t, name, out, want, mag, amxTol(k, true))
		}
	}
}

// TestAMXUnderSignals runs the AMX GEMM on every thread while the process
// takes a stream of signals (SIGURG, which the Go runtime also uses for
// preemption, and SIGPROF from a CPU profile): each signal delivered to a
// thread inside the kernel saves and restores its tile state through the
// signal frame on Go's signal stack. Every result must equal the first,
// bit for bit (the kernel's order of summation is fixed).
func TestAMXUnderSignals(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(19, 23))
	const m, k, n = 96, 1024, 256
	w := randHalf(r, n*k, BF16)
	x := randSlice(r, m*k)
	ref := make([]float32, m*n)
	amxGemmT(x, m, k, n, amxWeights{kind: amxBF16, wh: w}, ref)

	if err := pprof.StartCPUProfile(discard{}); err == nil {
		defer pprof.StopCPUProfile()
	}
	stop := make(chan struct{})
	var sent int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = syscall.Kill(os.Getpid(), syscall.SIGURG)
			sent++
			time.Sleep(10 * time.Microsecond)
		}
	}()
	var bad sync.Map
	var runs sync.WaitGroup
	for g := range 4 {
		runs.Add(1)
		go func() {
			defer runs.Done()
			out := make([]float32, m*n)
			for it := range 400 {
				amxGemmT(x, m, k, n, amxWeights{kind: amxBF16, wh: w}, out)
				for i := range out {
					if math.Float32bits(out[i]) != math.Float32bits(ref[i]) {
						bad.Store(fmt.Sprintf("goroutine %d run %d [%d]", g, it, i), fmt.Sprintf("%v, want %v", out[i], ref[i]))
						break
					}
				}
			}
		}()
	}
	runs.Wait()
	close(stop)
	wg.Wait()
	bad.Range(func(key, v any) bool {
		t.Errorf("%v = %v", key, v)
		return true
	})
	t.Logf("%d SIGURG sent during 1,600 AMX GEMMs on 4 goroutines", sent)
	if sent < 100 {
		t.Errorf("only %d signals sent: the test did not exercise the kernel under signals", sent)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestAMXPublicEntryPoints checks that HMatmul (bf16, x @ Wᵀ), QMatmul
// and PackedQ4Matmul take the AMX path from amxMinM rows and amxMinK
// columns (their results equal amxGemmT's bit for bit) and not below
// either or with HARK_AMX=0, and that f16 weights never do (they keep 11
// significant bits; x in bf16 would waste them).
func TestAMXPublicEntryPoints(t *testing.T) {
	needAMX(t)
	r := rand.New(rand.NewPCG(19, 24))
	const n = 64
	same := func(a, b []float32) bool {
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		m, k   int
		env    string
		viaAMX bool
	}{
		{amxMinM - 1, amxMinK, "", false},
		{amxMinM, amxMinK, "", true},
		{70, amxMinK + 128, "", true},
		{70, amxMinK + 128, "0", false},
		{70, amxMinK - 128, "", false},
	} {
		m, k := c.m, c.k
		t.Setenv("HARK_AMX", c.env)
		wh := randHalf(r, n*k, BF16)
		wf := randHalf(r, n*k, F16)
		packed, scales, biases, err := Quantize(randSlice(r, n*k), n, k, 64, 4)
		if err != nil {
			t.Fatal(err)
		}
		pq, err := PackQ4(packed, scales, biases, n, k, 64, make([]byte, PackedQ4Bytes(n, k, 64)))
		if err != nil {
			t.Fatal(err)
		}
		x := randSlice(r, m*k)
		check := func(name string, w amxWeights, call func(out []float32) error) {
			out, ref := make([]float32, m*n), make([]float32, m*n)
			if err := call(out); err != nil {
				t.Fatal(name, err)
			}
			amxGemmT(x, m, k, n, w, ref)
			if got := same(out, ref); got != c.viaAMX {
				t.Errorf("%s m=%d k=%d HARK_AMX=%q: result equals the AMX GEMM's: %v, want %v", name, m, k, c.env, got, c.viaAMX)
			}
		}
		check("HMatmul bf16", amxWeights{kind: amxBF16, wh: wh}, func(out []float32) error {
			return HMatmul(x, m, k, n, wh, BF16, true, out)
		})
		check("QMatmul", amxWeights{kind: amxQ, q: qmat{packed, scales, biases, 64, 4}}, func(out []float32) error {
			return QMatmul(x, m, k, n, packed, scales, biases, 64, 4, true, out)
		})
		if PackedQ4Supported(k, 64) {
			check("PackedQ4Matmul", amxWeights{kind: amxPQ4, pq: pq.Data, gs: 64}, func(out []float32) error {
				return PackedQ4Matmul(x, m, pq, out)
			})
		}
		// f16: the float32 path, to its float32 bound.
		out := make([]float32, m*n)
		if err := HMatmul(x, m, k, n, wf, F16, true, out); err != nil {
			t.Fatal(err)
		}
		want, mag := refHMatmul(x, m, k, n, wf, F16, true)
		assertClose(t, fmt.Sprintf("HMatmul f16 m=%d", m), out, want, mag, float64(k+2)*0x1p-24)
	}
}
