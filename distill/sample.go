package distill

import (
	"fmt"
	"math/rand/v2"

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

// RLCCSampler draws RL-CC states as the published distillation does (testdata/gen/states.py):
// each multiplier uniform on [AMin, AMax]; each observation uniform on [−T, T] for half the
// draws and on [T, 100·T] for the other half, T = Target·Scale.
type RLCCSampler struct {
	AMin, AMax    float64 // 0 and 0: 0.8 and 1.2
	Target, Scale float64 // 0 and 0: 0.064 and 12 (T = 0.768)
}

// DefaultRLCC is the RL-CC sampler with the published network's parameters.
var DefaultRLCC = RLCCSampler{AMin: 0.8, AMax: 1.2, Target: 0.064, Scale: 12}

// MaxSamples caps a sampler's n (the dataset of 4 inputs and a label is 40 bytes a row).
const MaxSamples = 100_000_000

func (s RLCCSampler) params() RLCCSampler {
	if s.AMin == 0 && s.AMax == 0 {
		s.AMin, s.AMax = DefaultRLCC.AMin, DefaultRLCC.AMax
	}
	if s.Target == 0 && s.Scale == 0 {
		s.Target, s.Scale = DefaultRLCC.Target, DefaultRLCC.Scale
	}
	return s
}

// T is the scaled target, the boundary between idle and congested observations.
func (s RLCCSampler) T() float64 {
	p := s.params()
	return p.Target * p.Scale
}

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

// Stream draws the states Sample does, in the same order, one at a time: each call of next
// writes the next state into row (len 4), so a caller that needs each state once holds none.
func (s RLCCSampler) Stream(seed uint64) (next func(row []float64), err error) {
	p := s.params()
	if !(p.AMin < p.AMax) || !(p.T() > 0) {
		return nil, fmt.Errorf("RL-CC sampler: multipliers [%v, %v] and T %v: want a non-empty range and T > 0", p.AMin, p.AMax, p.T())
	}
	t := p.T()
	rng := rand.New(rand.NewPCG(seed, 0x6e6963632d726c63)) // "nicc-rlc"
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	obs := func() float64 {
		if rng.Float64() < 0.5 {
			return uniform(-t, t)
		}
		return uniform(t, 100*t)
	}
	return func(row []float64) {
		row[0] = uniform(p.AMin, p.AMax)
		row[1] = obs()
		row[2] = uniform(p.AMin, p.AMax)
		row[3] = obs()
	}, nil
}

// stateRows is the number of states of d, labelled or not (Rows counts labels).
func stateRows(d *Dataset) int {
	if len(d.X) == 0 {
		return 0
	}
	return len(d.X[0])
}
