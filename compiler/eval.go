package compiler

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
)

// EvalRows is the float model's output for each row.
//
// For a recurrent model a row is either NumInputs values, one step of a single flow whose
// state carries over from the previous row (starting at zero), or NumInputs + 2·hidden values
// x, h, c, one step from that explicit state, whose result is y, h', c'.
//
// Networks refuse NaN and Inf inputs; tree ensembles send NaN the missing-value way.
func EvalRows(m *model.Model, rows [][]float64) ([][]float64, error) {
	st := m.NewState()
	n := m.NumInputs()
	explicit := false
	if len(rows) > 0 {
		w := len(rows[0])
		switch {
		case w == n:
		case st != nil && w == n+2*len(st.H):
			explicit = true
		case st != nil:
			return nil, fmt.Errorf("rows have %d values; model %s takes %d inputs, or %d with its state (x, h, c)", w, m.Name, n, n+2*len(st.H))
		default:
			return nil, fmt.Errorf("rows have %d values; model %s takes %d inputs (%v)", w, m.Name, n, m.Inputs)
		}
	}
	out := make([][]float64, len(rows))
	for i, row := range rows {
		if m.Ensemble == nil {
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("row %d: value %d is %v; only tree ensembles take missing values", i+1, j+1, v)
				}
			}
		}
		if !explicit {
			out[i] = m.Eval(st, row)
			continue
		}
		h := len(st.H)
		copy(st.H, row[n:n+h])
		copy(st.C, row[n+h:])
		y := m.Eval(st, row[:n])
		out[i] = append(append(y, st.H...), st.C...)
	}
	return out, nil
}
