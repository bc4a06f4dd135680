package distill

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// synth is a deterministic dataset of n rows, nf features uniform on [0, 1), target f(x).
func synth(n, nf int, seed uint64, f func(x []float64) float64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Dataset{X: make([][]float64, nf), Y: make([]float64, n)}
	for j := range nf {
		d.Names = append(d.Names, string(rune('a'+j)))
		d.X[j] = make([]float64, n)
	}
	x := make([]float64, nf)
	for r := range n {
		for j := range nf {
			x[j] = rng.Float64()
			d.X[j][r] = x[j]
		}
		d.Y[r] = f(x)
	}
	return d
}

func smooth(x []float64) float64 {
	return math.Sin(3*x[0]) + x[1]*x[1] - 0.5*x[2]*x[0]
}

func TestDeterministicAcrossThreads(t *testing.T) {
	d := synth(50000, 4, 1, smooth)
	var prev []byte
	for _, th := range []int{1, 2, 3} {
		m, _, err := Train(d, nil, Options{Trees: 5, Depth: 4, LearningRate: 1, L2: 1, Threads: th, Refit: true, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && !bytes.Equal(prev, b) {
			t.Fatalf("Threads=%d gives a different model", th)
		}
		prev = b
	}
}
