package rlcc

import "github.com/nicc-dev/nicc/nicsdk"

// HeatState is one fixed previous state (a_{t-2}, o_{t-1}) of the NIC paper's Fig. 5: a
// heatmap shows the action over (a_{t-1}, o_t) with it held.
type HeatState struct {
	Name          string
	APrev2, OPrev float64
	S             Sampler // the ranges of the grid around it
}

// HeatStates are Fig. 5's previous states, T = target·scale of the sampler s (0.768 by
// default).
func HeatStates(s Sampler) []HeatState {
	t := s.T()
	return []HeatState{
		{"steady state: a_{t-2} = 1, o_{t-1} = 0", 1, 0, s},
		{"under-utilised: a_{t-2} = 1, o_{t-1} = −T", 1, -t, s},
		{"congested: a_{t-2} = 1, o_{t-1} = 50T", 1, 50 * t, s},
	}
}

// Heatmap resolution: a_{t-1} on [AMin, AMax], o_t on [−T, 100·T] (the sampler's ranges).
const HeatCols, HeatRows = 41, 61

// Axes are the heatmap's cells: as are the HeatCols values of a_{t-1} on [S.AMin, S.AMax],
// ts the HeatRows values of o_t in units of T on [−1, 100].
func (h HeatState) Axes() (as, ts []float64) {
	as, ts = make([]float64, HeatCols), make([]float64, HeatRows)
	for c := range HeatCols {
		as[c] = h.S.AMin + (h.S.AMax-h.S.AMin)*float64(c)/float64(HeatCols-1)
	}
	for r := range HeatRows {
		ts[r] = -1 + 101*float64(r)/float64(HeatRows-1)
	}
	return as, ts
}

// Input is the RL-CC input x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}) at the cell a_{t-1} = a,
// o_t = tUnits·T: InputIn of the default layout.
func (h HeatState) Input(a, tUnits float64) []float64 {
	return h.InputIn(nicsdk.DefaultLayout, a, tUnits)
}

// InputIn is the window l at the cell a_{t-1} = a, o_t = tUnits·T, the heatmap's axes on the
// default layout's slots where l has them: the newest action a and observation o_t, every
// older action APrev2 and observation OPrev; the rate held at line rate (a new flow's) and the
// inflation the one that gives the state's o at that rate (StreamLayout's relation).
func (h HeatState) InputIn(l nicsdk.Layout, a, tUnits float64) []float64 {
	p := h.S.params()
	infl := func(o float64) float64 {
		if e := o/p.Scale + p.Target; e > 0 {
			return min(SampleBeta+e, SampleInflMax)
		}
		return 1
	}
	o := tUnits * h.S.T()
	now := [nicsdk.NumFeatures]float64{a, o, infl(o), 1}
	old := [nicsdk.NumFeatures]float64{h.APrev2, h.OPrev, infl(h.OPrev), 1}
	var x []float64
	for _, s := range l.Slots() {
		if s.Lag == 0 {
			x = append(x, now[s.Feature])
		} else {
			x = append(x, old[s.Feature])
		}
	}
	return x
}
