package lab

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
)

// RowEval is the float model run over rows one at a time, so a command can stream them: it
// holds nothing but a recurrent model's running state.
//
// For a recurrent model a row is either NumInputs values, one step of a single flow whose
// state carries over from the previous row (starting at zero), or NumInputs + 2·hidden values
// x, h, c, one step from that explicit state, whose result is y, h', c'.
//
// Networks refuse NaN and Inf inputs; tree ensembles send NaN the missing-value way.
type RowEval struct {
	m        *model.Model
	st       *model.State
	explicit bool // rows carry x, h, c
}

// NewRowEval checks that rows of width values suit m.
func NewRowEval(m *model.Model, width int) (*RowEval, error) {
	st := m.NewState()
	n := m.NumInputs()
	e := &RowEval{m: m, st: st}
	switch {
	case width == n:
	case st != nil && width == n+2*len(st.H):
		e.explicit = true
	case st != nil:
		return nil, fmt.Errorf("rows have %d values; model %s takes %d inputs, or %d with its state (x, h, c)", width, m.Name, n, n+2*len(st.H))
	default:
		return nil, fmt.Errorf("rows have %d values; model %s takes %d inputs (%v)", width, m.Name, n, m.Inputs)
	}
	return e, nil
}

// Eval is the model's output for the next row.
func (e *RowEval) Eval(row []float64) ([]float64, error) {
	if e.m.Ensemble == nil {
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("value %d is %v; only tree ensembles take missing values", j+1, v)
			}
		}
	}
	if !e.explicit {
		return e.m.Eval(e.st, row), nil
	}
	n, h := e.m.NumInputs(), len(e.st.H)
	copy(e.st.H, row[n:n+h])
	copy(e.st.C, row[n+h:])
	y := e.m.Eval(e.st, row[:n])
	return append(append(y, e.st.H...), e.st.C...), nil
}
