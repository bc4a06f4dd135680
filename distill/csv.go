package distill

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/model"
)

// ReadStatesCSV reads recorded states, one per line, by model.ReadCSV's rule: comma- (or tab-)
// separated numbers, an optional header of names. Every value must be finite: a state is a
// point the teacher is evaluated at. The dataset is unlabelled (Y nil).
func ReadStatesCSV(r io.Reader) (*Dataset, error) {
	rows, err := model.ReadCSV(r)
	if err != nil {
		return nil, err
	}
	return statesOf(rows)
}

func statesOf(rows *model.Rows) (*Dataset, error) {
	w := len(rows.Data[0])
	if len(rows.Data) > MaxSamples {
		return nil, fmt.Errorf("%d states, more than %d", len(rows.Data), MaxSamples)
	}
	d := &Dataset{Names: rows.Names, X: make([][]float64, w)}
	for i := range d.X {
		d.X[i] = make([]float64, len(rows.Data))
	}
	for r, row := range rows.Data {
		for i, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("state %d: column %d is %v: states must be finite", r+1, i+1, v)
			}
			d.X[i][r] = v
		}
	}
	return d, nil
}

// StatesSampler serves recorded states: Sample(n, seed) draws n of them at random without
// replacement (all of them, in file order, when n is 0 or at least their count).
type StatesSampler struct {
	States *Dataset
}

// LoadStates reads a CSV file of states (see ReadStatesCSV).
func LoadStates(path string) (*StatesSampler, error) {
	rows, err := model.ReadCSVFile(path)
	if err != nil {
		return nil, err
	}
	d, err := statesOf(rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &StatesSampler{States: d}, nil
}

// Inputs is the width of the recorded states.
func (s *StatesSampler) Inputs() int { return len(s.States.X) }

// Sample picks n states (see StatesSampler).
func (s *StatesSampler) Sample(n int, seed uint64) (*Dataset, error) {
	all := stateRows(s.States)
	if n < 0 {
		return nil, fmt.Errorf("samples %d: want a positive count", n)
	}
	if n == 0 || n >= all {
		return s.States, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e6963632d637376)) // "nicc-csv"
	perm := rng.Perm(all)[:n]
	d := &Dataset{Names: s.States.Names, X: make([][]float64, len(s.States.X))}
	for i, col := range s.States.X {
		d.X[i] = make([]float64, n)
		for r, p := range perm {
			d.X[i][r] = col[p]
		}
	}
	return d, nil
}
