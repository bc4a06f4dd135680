package distill

import (
	"fmt"

	"github.com/nicc-dev/nicc/nicsdk"
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
type RLCCSampler struct {
	rlcc.Sampler
	// Layout is the window the states fill, in the policy's order; the zero Layout is
	// nicsdk.DefaultLayout.
	Layout nicsdk.Layout
}

// layout is s.Layout, or the default for the zero Layout.
func (s RLCCSampler) layout() nicsdk.Layout { return s.Layout.OrDefault() }

// DefaultRLCC is the RL-CC sampler with the published network's parameters.
var DefaultRLCC = RLCCSampler{Sampler: rlcc.DefaultSampler}

// MaxSamples caps a sampler's n (the dataset of 4 inputs and a label is 40 bytes a row).
const MaxSamples = 100_000_000

// Inputs is the window's width: 4 for the default two states of (action, o).
func (s RLCCSampler) Inputs() int { return s.layout().Inputs() }

// Sample draws n states with a PCG seeded by seed.
func (s RLCCSampler) Sample(n int, seed uint64) (*Dataset, error) {
	if n < 1 || n > MaxSamples {
		return nil, fmt.Errorf("samples %d: want 1 to %d", n, MaxSamples)
	}
	l := s.layout()
	next, err := s.StreamLayout(seed, l)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Names: rlcc.LayoutNames(l), X: make([][]float64, l.Inputs())}
	for i := range d.X {
		d.X[i] = make([]float64, n)
	}
	row := make([]float64, l.Inputs())
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
