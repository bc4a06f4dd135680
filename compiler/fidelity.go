package compiler

import (
	"math"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
)

// Fidelity accumulators: the firmware's error against the float model, as verify and the
// report measure it.

type errAcc struct {
	n        int
	max, sum float64
}

func (a *errAcc) add(d float64) {
	d = math.Abs(d)
	a.n++
	a.max = max(a.max, d)
	a.sum += d * d
}

func (a *errAcc) stats() artifact.ErrStats {
	if a.n == 0 {
		return artifact.ErrStats{}
	}
	return artifact.ErrStats{MaxAbs: a.max, RMSE: math.Sqrt(a.sum / float64(a.n))}
}

// fidAcc accumulates the firmware's error against the float model at float states.
type fidAcc struct {
	pol           quantize.Policy
	m             *model.Model
	n             int
	tot, in, leaf errAcc
	dev, xq       []float64
}

func newFidAcc(pol quantize.Policy, m *model.Model) *fidAcc {
	n := len(pol.InputFormats())
	return &fidAcc{pol: pol, m: m, dev: make([]float64, n), xq: make([]float64, n)}
}

// add measures one decision: float state xf, its quantized inputs x, the firmware's y.
func (a *fidAcc) add(xf []float64, x []int32, y int32) {
	for i, v := range x {
		a.xq[i] = a.pol.InputFormats()[i].Value(v)
		a.dev[i] = max(a.dev[i], math.Abs(a.xq[i]-xf[i]))
	}
	fw := quantize.Predict(a.pol, y)
	atQ := a.m.Eval(nil, a.xq)[0]
	atF := a.m.Eval(nil, xf)[0]
	a.n++
	a.tot.add(fw - atF)
	a.in.add(atQ - atF)
	a.leaf.add(fw - atQ)
}

// addOutputs measures one decision whose inputs the float model saw exactly (an LSTM along a
// sequence): the firmware's output fw against the float model's.
func (a *fidAcc) addOutputs(fw, float float64) {
	a.n++
	a.tot.add(fw - float)
	a.in.add(0)
	a.leaf.add(fw - float)
}

func (a *fidAcc) result(what string) artifact.Fidelity {
	return artifact.Fidelity{What: what, Vectors: a.n, Total: a.tot.stats(), Inputs: a.in.stats(), Leaves: a.leaf.stats(), InputDev: a.dev}
}
