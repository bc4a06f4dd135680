package verify

import (
	"math"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
)

// Fidelity accumulators: the firmware's error against the float model, as verify and the
// report measure it.

type ErrAcc struct {
	N        int
	max, sum float64
}

// Add counts one error d.
func (a *ErrAcc) Add(d float64) {
	d = math.Abs(d)
	a.N++
	a.max = max(a.max, d)
	a.sum += d * d
}

// Stats are the largest |error| and the RMSE so far.
func (a *ErrAcc) Stats() artifact.ErrStats {
	if a.N == 0 {
		return artifact.ErrStats{}
	}
	return artifact.ErrStats{MaxAbs: a.max, RMSE: math.Sqrt(a.sum / float64(a.N))}
}

// FidAcc accumulates the firmware's error against the float model at float states.
type FidAcc struct {
	pol           quantize.Policy
	m             *model.Model
	n             int
	tot, in, leaf ErrAcc
	dev, xq       []float64
}

// NewFidAcc accumulates pol's error against the float model m.
func NewFidAcc(pol quantize.Policy, m *model.Model) *FidAcc {
	n := len(pol.InputFormats())
	return &FidAcc{pol: pol, m: m, dev: make([]float64, n), xq: make([]float64, n)}
}

// Add measures one decision: float state xf, its quantized inputs x, the firmware's y.
func (a *FidAcc) Add(xf []float64, x []int32, y int32) {
	for i, v := range x {
		a.xq[i] = a.pol.InputFormats()[i].Value(v)
		a.dev[i] = max(a.dev[i], math.Abs(a.xq[i]-xf[i]))
	}
	fw := quantize.Predict(a.pol, y)
	atQ := a.m.Eval(nil, a.xq)[0]
	atF := a.m.Eval(nil, xf)[0]
	a.n++
	a.tot.Add(fw - atF)
	a.in.Add(atQ - atF)
	a.leaf.Add(fw - atQ)
}

// AddOutputs measures one decision whose inputs the float model saw exactly (an LSTM along a
// sequence): the firmware's output fw against the float model's.
func (a *FidAcc) AddOutputs(fw, float float64) {
	a.n++
	a.tot.Add(fw - float)
	a.in.Add(0)
	a.leaf.Add(fw - float)
}

// Result is the fidelity so far, of the output named what.
func (a *FidAcc) Result(what string) artifact.Fidelity {
	return artifact.Fidelity{What: what, Vectors: a.n, Total: a.tot.Stats(), Inputs: a.in.Stats(), Leaves: a.leaf.Stats(), InputDev: a.dev}
}
