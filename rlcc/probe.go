package rlcc

import "github.com/nicc-dev/nicc/nicsdk"

// ProbeRow is one state of the sanity probe: the policy's inputs in Names' order and what any
// policy that controls congestion does there.
type ProbeRow struct {
	What string     // the situation, e.g. "congestion arrives"
	X    [4]float64 // a_prev, o, a_prev2, o_prev
	Cut  bool       // true: the multiplier must cut the rate (below the hold band); false: raise it
}

// ProbeOFactor is how far above target a probe's congested o is: o = ProbeOFactor·target·scale.
const ProbeOFactor = 10

// ProbeActions are the previous multipliers the probe holds each situation at.
var ProbeActions = []float64{0.9, 1, 1.1}

// ProbeRows are the sanity probe under p: at each of ProbeActions (both history actions the
// same), o far above target (ProbeOFactor·target·scale) must cut, whether the previous state was
// congested too or idle, and o at its idle minimum (−target·scale) must raise, whether the
// previous state was idle or congested. The rows whose two states differ are the ones a
// policy reading its inputs in the wrong order fails: it sees the other state as the newest.
func ProbeRows(p nicsdk.Params) []ProbeRow {
	t := SamplerFor(p).T()
	hi, lo := min(ProbeOFactor*t, float64(nicsdk.OMax)/nicsdk.Q16One), -t
	var rows []ProbeRow
	for _, a := range ProbeActions {
		rows = append(rows,
			ProbeRow{"congested", [4]float64{a, hi, a, hi}, true},
			ProbeRow{"congestion arrives", [4]float64{a, hi, a, lo}, true},
			ProbeRow{"idle", [4]float64{a, lo, a, lo}, false},
			ProbeRow{"congestion clears", [4]float64{a, lo, a, hi}, false})
	}
	return rows
}

// Passes reports whether the multiplier m is what the row wants: a cut below the hold band, or
// a raise above it.
func (r ProbeRow) Passes(m float64) bool {
	if r.Cut {
		return m < 1-HoldBand
	}
	return m > 1+HoldBand
}
