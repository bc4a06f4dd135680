package distill

import (
	"math/rand/v2"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// trainerStates is n RL-CC-like states x = (a_prev, o, a_prev2, o_prev) labelled by the teacher:
// multipliers uniform on [0.8, 1.2], observations uniform on [−T, T] for half the draws and on
// [T, 100·T] for the rest, T = 0.064·12 (the sampler, rebuilt here so the trainer's
// tests do not depend on the sampler's).
func trainerStates(tb testing.TB, n int, seed uint64) *Dataset {
	tb.Helper()
	teacher, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		tb.Fatal(err)
	}
	const T = 0.064 * 12
	rng := rand.New(rand.NewPCG(seed, 2))
	obs := func() float64 {
		if rng.IntN(2) == 0 {
			return -T + 2*T*rng.Float64()
		}
		return T + 99*T*rng.Float64()
	}
	d := &Dataset{Names: teacher.Inputs, X: make([][]float64, 4), Y: make([]float64, n)}
	for f := range d.X {
		d.X[f] = make([]float64, n)
	}
	x := make([]float64, 4)
	for r := range n {
		x[0], x[1], x[2], x[3] = 0.8+0.4*rng.Float64(), obs(), 0.8+0.4*rng.Float64(), obs()
		for f := range x {
			d.X[f][r] = x[f]
		}
		d.Y[r] = teacher.Eval(nil, x)[0]
	}
	return d
}

// BenchmarkTrain trains on 200k teacher-labelled RL-CC states with 2 threads, learning rate 1
// and λ = 1 (the XGBoost comparison settings), thresholds on nicsdk's Q16 grid, and
// reports rows/s and the RMSE on 50k other states.
func BenchmarkTrain(b *testing.B) {
	d := trainerStates(b, 200_000, 1)
	valid := trainerStates(b, 50_000, 2)
	grid := rlccGrid()
	for _, c := range []struct {
		name         string
		trees, depth int
		refit        bool
	}{{"10x4", 10, 4, false}, {"20x4", 20, 4, false}, {"10x4-refit", 10, 4, true}, {"20x4-refit", 20, 4, true}} {
		b.Run(c.name, func(b *testing.B) {
			var rep *Report
			for b.Loop() {
				var err error
				_, rep, err = Train(d, valid, Options{Trees: c.trees, Depth: c.depth, LearningRate: 1, L2: 1, Threads: 2, Grid: grid, Refit: c.refit})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.Rows())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(rep.HeldOutRMSE, "heldout-rmse")
		})
	}
}
