package distill

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// pool runs Train's parallel work on a fixed number of goroutines. Work is cut into pieces
// that do not depend on the number of goroutines, so results do not either.
type pool struct{ threads int }

// newPool is a pool of threads goroutines; ≤ 0 means runtime.GOMAXPROCS(0).
func newPool(threads int) pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return pool{threads}
}

// chunkRows is the unit of row-parallel work; fixed, so that sums merged per chunk in order are
// the same for any number of threads.
const chunkRows = 1 << 15

// forEach runs fn(i) for i in [0, n) on the pool's goroutines.
func (pl pool) forEach(n int, fn func(i int)) {
	w := min(pl.threads, n)
	if w <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// forRows runs fn over fixed chunks of n rows in parallel.
func (pl pool) forRows(n int, fn func(lo, hi int)) {
	chunks := (n + chunkRows - 1) / chunkRows
	pl.forEach(chunks, func(c int) { fn(c*chunkRows, min(n, (c+1)*chunkRows)) })
}

// sumRows sums fn over the chunks of n rows, merging in chunk order (deterministic).
func (pl pool) sumRows(n int, fn func(lo, hi int) [2]float64) [2]float64 {
	chunks := (n + chunkRows - 1) / chunkRows
	part := make([][2]float64, chunks)
	pl.forEach(chunks, func(c int) { part[c] = fn(c*chunkRows, min(n, (c+1)*chunkRows)) })
	var s [2]float64
	for _, p := range part {
		s[0] += p[0]
		s[1] += p[1]
	}
	return s
}
