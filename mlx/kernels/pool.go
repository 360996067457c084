package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Persistent helpers for parallelFor. A helper that finished a
// job keeps polling for the next one for poolSpin before it parks, so the
// back-to-back calls of a decode step (dozens per token, tens of µs apart)
// find it awake instead of paying a goroutine start plus futex wake-up each.
// The polling loop yields with runtime.Gosched every poolYieldEvery polls
// so other goroutines on the same P still run. Yielding on every poll put
// the scheduler's lock in 5% of decode's CPU profile, and 0.5B decode ran
// 2% slower than with this (same-process A/B windows).
//
// The spin is bounded by a count of polls, not a clock: reading time.Now
// every poolYieldEvery polls took about 15% of the spinning helper's
// samples on the shared 2-vCPU machine, and the bound needs no precision.

// poolSpinPolls is how many polls a helper makes before it parks: with a
// Gosched every poolYieldEvery of them, 120-190 µs on the 2-vCPU Zen 4
// machine, longer than the gaps between a decode step's matmuls.
const poolSpinPolls = 64 << 10

// poolYieldEvery is how many polls a helper makes per Gosched (about a
// microsecond of them).
const poolYieldEvery = 64

type poolJob struct {
	n        int64
	minChunk int64 // the smallest piece handed out (a multiple of align)
	align    int64 // every piece's start and length is a multiple of it
	workers  int64
	fn       func(lo, hi int)
	next     atomic.Int64
	done     atomic.Int64 // elements finished
	helpers  int32        // helpers that may join
	joined   atomic.Int32
}

var pool struct {
	mu      sync.Mutex // one job at a time; a nested or concurrent call falls back
	once    sync.Once
	seq     atomic.Uint64
	job     atomic.Pointer[poolJob]
	parked  []atomic.Bool
	wake    []chan struct{}
	helpers int
}

func poolStart() {
	pool.helpers = runtime.GOMAXPROCS(0) - 1
	pool.parked = make([]atomic.Bool, pool.helpers)
	pool.wake = make([]chan struct{}, pool.helpers)
	for i := range pool.helpers {
		pool.wake[i] = make(chan struct{}, 1)
		go poolHelper(i)
	}
}

func poolHelper(id int) {
	var seen uint64
	for {
		// Poll for a new job, then park.
		for spin := 1; pool.seq.Load() == seen; spin++ {
			if spin%poolYieldEvery != 0 {
				continue
			}
			if spin >= poolSpinPolls {
				pool.parked[id].Store(true)
				if pool.seq.Load() == seen {
					<-pool.wake[id]
				}
				pool.parked[id].Store(false)
				spin = 0
				continue
			}
			runtime.Gosched()
		}
		seen = pool.seq.Load()
		j := pool.job.Load()
		if j == nil || j.joined.Add(1) > j.helpers {
			continue
		}
		j.run()
	}
}

// run takes pieces of j until none is left. Each piece is half an even
// share of what remains (guided self-scheduling): large while much is
// left, so the hand-outs are few, and down to minChunk at the end, so the
// threads finish together. With fixed pieces (a quarter of each thread's
// share) a thread that took the last big piece late, or was descheduled
// in it, held the other up for up to that piece: 0.5B bf16 decode ran
// 1-15% slower (six same-process A/B runs, alternating token by token, on
// the loaded 2-vCPU machine), and the helper did only a third of the
// matmul work (about half with guided pieces).
func (j *poolJob) run() {
	for {
		lo := j.next.Load()
		if lo >= j.n {
			return
		}
		size := (j.n - lo) / (2 * j.workers)
		size = max((size+j.align-1)/j.align*j.align, j.minChunk)
		hi := min(lo+size, j.n)
		if !j.next.CompareAndSwap(lo, hi) {
			continue // another thread took a piece first
		}
		j.fn(int(lo), int(hi))
		j.done.Add(hi - lo)
	}
}

// poolFor runs j on the caller and up to workers-1 helpers; false when the
// pool is busy (the caller then starts goroutines).
func poolFor(j *poolJob, workers int) bool {
	pool.once.Do(poolStart)
	if pool.helpers < 1 || !pool.mu.TryLock() {
		return false
	}
	j.helpers = int32(min(workers-1, pool.helpers))
	pool.job.Store(j)
	pool.seq.Add(1)
	for i := range int(j.helpers) {
		if pool.parked[i].Load() {
			select {
			case pool.wake[i] <- struct{}{}:
			default:
			}
		}
	}
	j.run()
	for spins := 0; j.done.Load() < j.n; spins++ {
		if spins > 1000 {
			runtime.Gosched()
		}
	}
	pool.job.Store(nil)
	pool.mu.Unlock()
	return true
}
