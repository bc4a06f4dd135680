package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// lstmRun feeds the same interleaved decisions of three flows to l and returns J = Σ w_k·y_k.
func lstmRun(l *lstm, xs [][]float64, flows []uint32, w []float64) float64 {
	j := 0.0
	for k, x := range xs {
		j += w[k] * l.decide(flows[k], x)
	}
	return j
}

func lstmCase(seed uint64) (*lstm, [][]float64, []uint32, []float64) {
	r := rand.New(rand.NewPCG(seed, 9))
	l := newLSTM(r)
	for i := range l.flat { // biases too, away from the zero start
		l.flat[i] += 0.3 * r.NormFloat64()
	}
	var xs [][]float64
	var flows []uint32
	var w []float64
	for range 24 {
		xs = append(xs, []float64{0.8 + 0.4*r.Float64(), 2 * r.NormFloat64(), 0.8 + 0.4*r.Float64(), 2 * r.NormFloat64()})
		flows = append(flows, uint32(r.IntN(3)))
		w = append(w, r.NormFloat64())
	}
	return l, xs, flows, w
}

// The backward pass through time is the gradient of Σ w_k·y_k over interleaved flows: every
// parameter's derivative matches a central finite difference of the whole sequence.
func TestLSTMGradientMatchesFiniteDifferences(t *testing.T) {
	l, xs, flows, w := lstmCase(5)
	lstmRun(l, xs, flows, w)
	g := make([]float64, len(l.flat))
	l.backward(w, g)
	const h = 1e-6
	worst := 0.0
	for i := range l.flat {
		v := l.flat[i]
		l.flat[i] = v + h
		up := lstmRun(l, xs, flows, w)
		l.backward(w, make([]float64, len(l.flat)))
		l.flat[i] = v - h
		down := lstmRun(l, xs, flows, w)
		l.backward(w, make([]float64, len(l.flat)))
		l.flat[i] = v
		worst = max(worst, math.Abs((up-down)/(2*h)-g[i]))
	}
	if worst > 1e-6 {
		t.Errorf("gradient off its finite difference by up to %g over %d parameters", worst, len(l.flat))
	}
}

// The exported model is the trained network: model.Eval with each flow's state gives the
// decisions' y bit for bit.
func TestLSTMModelIsTheNetwork(t *testing.T) {
	l, xs, flows, w := lstmCase(6)
	m := l.model("t")
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	states := map[uint32]*model.State{}
	for k, x := range xs {
		y := l.decide(flows[k], x)
		if states[flows[k]] == nil {
			states[flows[k]] = m.NewState()
		}
		if got := m.Eval(states[flows[k]], x)[0]; got != y {
			t.Fatalf("decision %d: model %v, network %v", k, got, y)
		}
	}
	l.backward(w, make([]float64, len(l.flat)))
	if len(l.flows) != 0 || len(l.order) != 0 {
		t.Error("backward left flow state behind")
	}
}
