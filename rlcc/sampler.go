package rlcc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The multiplier range the published distillation samples (testdata/gen/states.py): wider than
// the handler's clamp [nicsdk.AMin, nicsdk.AMax] = [1/1.2, 1.2] at the bottom.
const (
	SampleAMin = 0.8
	SampleAMax = 1.2
)

// Sampler draws RL-CC states x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}) as the published
// distillation does: each multiplier uniform on [AMin, AMax]; each observation uniform on
// [−T, T] for half the draws and on [T, 100·T] for the other half, T = Target·Scale.
type Sampler struct {
	AMin, AMax    float64 // 0 and 0: SampleAMin and SampleAMax
	Target, Scale float64 // 0 and 0: nicsdk's defaults, 0.064 and 12 (T = 0.768)
}

// DefaultSampler is the sampler with the published network's parameters.
var DefaultSampler = Sampler{AMin: SampleAMin, AMax: SampleAMax, Target: nicsdk.DefaultTarget, Scale: nicsdk.DefaultScale}

// SamplerFor is the sampler under the handler's parameters p: the observations scale with
// T = target·scale. The default target and scale give DefaultSampler's T, 0.768 exactly (the
// Q16 target is 0.0639954).
func SamplerFor(p nicsdk.Params) Sampler {
	s := DefaultSampler
	if def := nicsdk.DefaultParams(); p.Target == def.Target && p.Scale == def.Scale {
		return s
	}
	s.Target, s.Scale = float64(p.Target)/nicsdk.Q16One, float64(p.Scale)/nicsdk.Q16One
	return s
}

// SampleOMax is the top of the observation SamplerFor(p) draws, 100·T, within the handler's
// clamp.
func SampleOMax(p nicsdk.Params) float64 {
	return min(100*SamplerFor(p).T(), float64(nicsdk.OMax)/nicsdk.Q16One)
}

func (s Sampler) params() Sampler {
	if s.AMin == 0 && s.AMax == 0 {
		s.AMin, s.AMax = DefaultSampler.AMin, DefaultSampler.AMax
	}
	if s.Target == 0 && s.Scale == 0 {
		s.Target, s.Scale = DefaultSampler.Target, DefaultSampler.Scale
	}
	return s
}

// T is the scaled target, the boundary between idle and congested observations.
func (s Sampler) T() float64 {
	p := s.params()
	return p.Target * p.Scale
}

// Stream draws states with a PCG seeded by seed, one at a time: each call of next writes the
// next state into row (len 4), so a caller that needs each state once holds none. It is
// StreamLayout of the default layout.
func (s Sampler) Stream(seed uint64) (next func(row []float64), err error) {
	return s.StreamLayout(seed, nicsdk.DefaultLayout)
}

// The rates and the RTT inflation StreamLayout draws for the rate and inflation features.
const (
	SampleRateMin = 0.001              // the default minimum rate, a fraction of line rate
	SampleBeta    = nicsdk.DefaultBeta // the inflation below which o is at its minimum
	SampleInflMax = float64(nicsdk.OMax) / nicsdk.Q16One
)

// StreamLayout is Stream for the window l (row len l.Inputs(), l.Slots() in order): each state
// independently, its multiplier uniform on [AMin, AMax] and its observation as Stream's; its
// rate (the rate feature) log-uniform on [SampleRateMin, 1]; its RTT inflation the one that
// gives that o at that rate, beta + (o/scale + target)/sqrt(rate) (SampleBeta; at most
// SampleInflMax), or uniform on [1, beta] where o is at its minimum (no excess inflation). The
// draws are, state by state, a, o, rate, inflation, each only when a feature needs it, so the
// default layout's states are Stream's.
func (s Sampler) StreamLayout(seed uint64, l nicsdk.Layout) (next func(row []float64), err error) {
	p := s.params()
	if !(p.AMin < p.AMax) || !(p.T() > 0) {
		return nil, fmt.Errorf("RL-CC sampler: multipliers [%v, %v] and T %v: want a non-empty range and T > 0", p.AMin, p.AMax, p.T())
	}
	if err := l.Check(0); err != nil {
		return nil, fmt.Errorf("RL-CC sampler: %w", err)
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
	has := l.Features.Has
	needO := has(nicsdk.FeatObs) || has(nicsdk.FeatInfl)
	needRate := has(nicsdk.FeatRate) || has(nicsdk.FeatInfl)
	return func(row []float64) {
		i := 0
		for range l.History {
			var st [nicsdk.NumFeatures]float64
			if has(nicsdk.FeatAction) {
				st[nicsdk.FeatAction] = uniform(p.AMin, p.AMax)
			}
			if needO {
				st[nicsdk.FeatObs] = obs()
			}
			if needRate {
				st[nicsdk.FeatRate] = math.Exp(uniform(math.Log(SampleRateMin), 0))
			}
			if has(nicsdk.FeatInfl) {
				if e := st[nicsdk.FeatObs]/p.Scale + p.Target; e > 0 {
					st[nicsdk.FeatInfl] = min(SampleBeta+e/math.Sqrt(st[nicsdk.FeatRate]), SampleInflMax)
				} else {
					st[nicsdk.FeatInfl] = uniform(1, SampleBeta)
				}
			}
			for f := range nicsdk.NumFeatures {
				if has(f) {
					row[i] = st[f]
					i++
				}
			}
		}
	}, nil
}
