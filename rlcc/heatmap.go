package rlcc

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
// o_t = tUnits·T.
func (h HeatState) Input(a, tUnits float64) []float64 {
	return []float64{a, tUnits * h.S.T(), h.APrev2, h.OPrev}
}
