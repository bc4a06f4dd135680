package train

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// addGrad is ∇θ π(x): every weight's derivative matches a central finite difference.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	m := newMLP(rand.New(rand.NewPCG(3, 4)))
	x := []float64{1.05, 0.7, 0.95, -0.3}
	g := m.zero()
	m.addGrad(g, x, 1)
	const h = 1e-6
	worst := 0.0
	m.each(func(k, i, j int) {
		w := m.w[k][i][j]
		m.w[k][i][j] = w + h
		var s acts
		up := m.forward(x, &s)
		m.w[k][i][j] = w - h
		down := m.forward(x, &s)
		m.w[k][i][j] = w
		num := (up - down) / (2 * h)
		worst = max(worst, math.Abs(num-g.w[k][i][j]))
	})
	if worst > 1e-7 {
		t.Errorf("gradient off its finite difference by up to %g", worst)
	}
}

// Training lowers the mean |δ| (the flows get nearer their target) and a seed gives the
// same weights and curve, whether a step's rollouts run one at a time or all at once.
func TestTrainLearnsAndIsDeterministic(t *testing.T) {
	p := nicsdk.DefaultParams()
	base, err := netsim.Config{}.BaseRTTNs()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseRTT = base
	opt := Options{Iterations: 60, Seed: 1, LR: 3e-3, Params: p, ActionPenalty: DefaultActionPenalty}
	// The two trainings of one seed run at once: each must be a function of its options only,
	// and the one whose rollouts run at once trains the same policy.
	var b *Result
	var errB error
	done := make(chan struct{})
	together := opt
	together.Parallel = 3
	go func() { b, errB = Train(together); close(done) }()
	a, err := Train(opt)
	<-done
	if err != nil || errB != nil {
		t.Fatal(err, errB)
	}
	first, last := a.Curve[0].MeanAbs, a.Curve[len(a.Curve)-1].MeanAbs
	if !(last < 0.95*first) {
		t.Errorf("mean |δ| from %.4f to %.4f over 60 steps; want it to fall by a twentieth", first, last)
	}
	// The later half of each rollout, after the start's burst, is where the learning shows:
	// its |δ| is well below the whole rollout's and falls by more.
	sFirst, sLast := a.Curve[0].SteadyAbs, a.Curve[len(a.Curve)-1].SteadyAbs
	if !(sFirst < first && sLast < last && sLast < 0.8*sFirst) {
		t.Errorf("later-half |δ| from %.4f to %.4f (whole %.4f to %.4f); want it below the whole rollout's and to fall by a fifth", sFirst, sLast, first, last)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("one seed, two different trainings")
	}
	t.Logf("mean |δ| %.4f → %.4f, later half %.4f → %.4f over 60 steps", first, last, sFirst, sLast)
	if _, err := Train(Options{Iterations: 1, Params: p, ActionPenalty: -1}); err == nil {
		t.Error("a negative action penalty: no error")
	}
	if _, err := Train(Options{Iterations: 0, Params: nicsdk.DefaultParams()}); err == nil {
		t.Error("0 iterations: no error")
	}
}
