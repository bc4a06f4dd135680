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
// outputs), on every CPU.
func Measure(student *model.Model, d *Dataset) Fit {
	return Compare(Predict(student, d), d.Y)
}

// Predict is student's output at every state of d. A tree student as distill trains them
// (splits v ≤ t, a plain sum) on finite states is walked branch-free a level at a time over
// many rows at once (predictAt); that gives model.Eval's bits, which any other model and any
// non-finite state gets.
func Predict(student *model.Model, d *Dataset) []float64 {
	n, pl := d.Rows(), newPool(0)
	if e := student.Ensemble; e != nil && flatEvaluable(e, len(d.X)) && d.Check() == nil {
		return predictAt(pl, e.Base, e.Trees, d.X, n)
	}
	pred := make([]float64, n)
	pl.forRows(n, func(lo, hi int) {
		x := make([]float64, len(d.X))
		for r := lo; r < hi; r++ {
			for i, col := range d.X {
				x[i] = col[r]
			}
			pred[r] = student.Eval(nil, x)[0]
		}
	})
	return pred
}

// flatEvaluable says predictAt gives e's Eval on finite inputs of nf features: float64
// splits that send v ≤ t left (no zero band, so a finite v is only compared) on features
// below nf, a float64 sum and no transform.
func flatEvaluable(e *model.Ensemble, nf int) bool {
	if e.Float32 || e.Float32Splits || e.Transform != model.TransformIdentity {
		return false
	}
	for _, t := range e.Trees {
		for _, nd := range t.Nodes {
			if !nd.Leaf && (nd.Cmp != model.CmpLE || nd.Missing == model.MissingZero || nd.Feature >= nf) {
				return false
			}
		}
	}
	return true
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
