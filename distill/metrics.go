package distill

import (
	"math"

	"github.com/nicc-dev/nicc/model"
)

// HoldBand is the relative change within which a multiplier counts as holding the rate:
// m(y) in [1 − HoldBand, 1 + HoldBand] is hold, above increase, below decrease.
const HoldBand = 0.005

// Multiplier is RL-CC's action map (docs/ARCHITECTURE.md): 1 + 0.2·y for y ≥ 0, 1/(1 − 0.2·y) for y < 0.
func Multiplier(y float64) float64 {
	if y >= 0 {
		return 1 + 0.2*y
	}
	return 1 / (1 - 0.2*y)
}

// Direction is what a multiplier does to the rate.
type Direction int

const (
	Decrease Direction = iota - 1
	Hold
	Increase
)

// DirectionOf classifies the policy output y by its multiplier (see HoldBand).
func DirectionOf(y float64) Direction {
	switch m := Multiplier(y); {
	case m > 1+HoldBand:
		return Increase
	case m < 1-HoldBand:
		return Decrease
	}
	return Hold
}

// Fit is how closely a student follows the teacher on a labelled dataset.
type Fit struct {
	Rows   int     `json:"rows"`
	RMSE   float64 `json:"rmse"`
	MaxAbs float64 `json:"max_abs_err"`
	// Disagree is the fraction of states where student and teacher differ in direction
	// (increase, decrease, hold) under the RL-CC action map.
	Disagree float64 `json:"direction_disagreement"`
}

// Measure evaluates student on every state of d against the labels d.Y (the teacher's
// outputs).
func Measure(student *model.Model, d *Dataset) Fit {
	n := d.Rows()
	pred := make([]float64, n)
	x := make([]float64, len(d.X))
	for r := range n {
		for i, col := range d.X {
			x[i] = col[r]
		}
		pred[r] = student.Eval(nil, x)[0]
	}
	return Compare(pred, d.Y)
}

// Compare measures predictions against the teacher's outputs, row by row.
func Compare(pred, teacher []float64) Fit {
	f := Fit{Rows: len(pred)}
	if f.Rows == 0 || len(teacher) != len(pred) {
		return f
	}
	var sum float64
	var dis int
	for i, p := range pred {
		e := p - teacher[i]
		sum += e * e
		f.MaxAbs = max(f.MaxAbs, math.Abs(e))
		if DirectionOf(p) != DirectionOf(teacher[i]) {
			dis++
		}
	}
	f.RMSE = math.Sqrt(sum / float64(f.Rows))
	f.Disagree = float64(dis) / float64(f.Rows)
	return f
}
