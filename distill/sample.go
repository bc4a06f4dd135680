package distill

import (
	"fmt"

	"github.com/nicc-dev/nicc/rlcc"
)

// A Sampler draws the states a teacher is distilled on. The default is RLCCSampler; a CSV of
// recorded states is StatesSampler. Later, rollouts of the closed-loop simulator (netsim) come
// through this same interface: a sampler whose states are the ones a policy visits.
type Sampler interface {
	// Sample returns n states, unlabelled (Y nil); the same seed gives the same states.
	Sample(n int, seed uint64) (*Dataset, error)
	// Inputs is the number of values in a state, which the teacher must take.
	Inputs() int
}

// RLCCSampler draws RL-CC states (rlcc.Sampler) as a distill Sampler; its zero value is
// DefaultRLCC.
type RLCCSampler struct{ rlcc.Sampler }

// DefaultRLCC is the RL-CC sampler with the published network's parameters.
var DefaultRLCC = RLCCSampler{rlcc.DefaultSampler}

// MaxSamples caps a sampler's n (the dataset of 4 inputs and a label is 40 bytes a row).
const MaxSamples = 100_000_000

// Inputs is 4: the two-state window.
func (RLCCSampler) Inputs() int { return len(rlcc.Names) }

// Sample draws n states with a PCG seeded by seed.
func (s RLCCSampler) Sample(n int, seed uint64) (*Dataset, error) {
	if n < 1 || n > MaxSamples {
		return nil, fmt.Errorf("samples %d: want 1 to %d", n, MaxSamples)
	}
	next, err := s.Stream(seed)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Names: append([]string(nil), rlcc.Names...), X: make([][]float64, len(rlcc.Names))}
	for i := range d.X {
		d.X[i] = make([]float64, n)
	}
	row := make([]float64, len(rlcc.Names))
	for r := range n {
		next(row)
		for i, v := range row {
			d.X[i][r] = v
		}
	}
	return d, nil
}

// stateRows is the number of states of d, labelled or not (Rows counts labels).
func stateRows(d *Dataset) int {
	if len(d.X) == 0 {
		return 0
	}
	return len(d.X[0])
}
