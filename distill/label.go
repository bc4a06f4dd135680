package distill

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/nicc-dev/nicc/model"
)

// Label fills d.Y with the teacher's float output (its first output) at every state. The
// teacher must take as many inputs as a state has values; a NaN or infinite output is an
// error naming the first such row. A recurrent teacher is evaluated from a fresh state at
// every row (its output for a single decision).
func Label(teacher *model.Model, d *Dataset) error {
	if n, w := teacher.NumInputs(), len(d.X); n != w {
		return fmt.Errorf("teacher %s takes %d inputs, the states have %d values", teacher.Name, n, w)
	}
	if teacher.NumOutputs() < 1 {
		return fmt.Errorf("teacher %s has no output", teacher.Name)
	}
	rows := stateRows(d)
	y := make([]float64, rows)
	workers := min(runtime.GOMAXPROCS(0), max(1, rows/4096))
	chunk := (rows + workers - 1) / workers
	bad := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min(rows, (w+1)*chunk)
		bad[w] = -1
		wg.Go(func() {
			// Four states at a time (the last ones padded with a repeat of the last state).
			var s model.Scratch
			var xs [4][]float64
			for k := range xs {
				xs[k] = make([]float64, len(d.X))
			}
			for r := lo; r < hi; r += 4 {
				n := min(4, hi-r)
				for k, x := range xs {
					for i, col := range d.X {
						x[i] = col[r+min(k, n-1)]
					}
				}
				ys := teacher.EvalInto4(&s, &xs)
				for k, v := range ys[:n] {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						bad[w] = r + k
						return
					}
					y[r+k] = v
				}
			}
		})
	}
	wg.Wait()
	for _, r := range bad {
		if r >= 0 {
			x := make([]float64, len(d.X))
			for i, col := range d.X {
				x[i] = col[r]
			}
			return fmt.Errorf("teacher %s outputs %v at state %d %v: a label must be finite", teacher.Name, teacher.Eval(teacher.NewState(), x)[0], r+1, x)
		}
	}
	d.Y = y
	return nil
}
