package distill

import (
	"math"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

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
		if rlcc.DirectionOf(p) != rlcc.DirectionOf(teacher[i]) {
			dis++
		}
	}
	f.RMSE = math.Sqrt(sum / float64(f.Rows))
	f.Disagree = float64(dis) / float64(f.Rows)
	return f
}
