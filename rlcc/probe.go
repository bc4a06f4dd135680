package rlcc

import "github.com/nicc-dev/nicc/nicsdk"

// ProbeRow is one state of the sanity probe: the policy's inputs in its layout's order and
// what any policy that controls congestion does there.
type ProbeRow struct {
	What string    // the situation, e.g. "congestion arrives"
	X    []float64 // the window, in the layout's slot order (LayoutNames)
	Cut  bool      // true: the multiplier must cut the rate (below the hold band); false: raise it
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
func ProbeRows(p nicsdk.Params, l nicsdk.Layout) []ProbeRow {
	t := SamplerFor(p).T()
	hi, lo := min(ProbeOFactor*t, float64(nicsdk.OMax)/nicsdk.Q16One), -t
	var rows []ProbeRow
	for _, a := range ProbeActions {
		rows = append(rows,
			ProbeRow{"congested", probeWindow(p, l, a, hi, hi), true},
			ProbeRow{"congestion arrives", probeWindow(p, l, a, hi, lo), true},
			ProbeRow{"idle", probeWindow(p, l, a, lo, lo), false},
			ProbeRow{"congestion clears", probeWindow(p, l, a, lo, hi), false})
	}
	return rows
}

// probeWindow is the window of l whose newest state has observation newest and every older
// state older, each with previous multiplier a, at line rate, with the RTT inflation that
// gives its o there (1.0, an empty path, for the idle minimum).
func probeWindow(p nicsdk.Params, l nicsdk.Layout, a, newest, older float64) []float64 {
	target, beta, scale := Real(p)
	var x []float64
	for _, s := range l.Slots() {
		o := older
		if s.Lag == 0 {
			o = newest
		}
		switch s.Feature {
		case nicsdk.FeatAction:
			x = append(x, a)
		case nicsdk.FeatObs:
			x = append(x, o)
		case nicsdk.FeatInfl:
			infl := 1.0
			if o > -target*scale {
				infl = o/scale + target + beta
			}
			x = append(x, infl)
		case nicsdk.FeatRate:
			x = append(x, 1)
		}
	}
	return x
}

// Passes reports whether the multiplier m is what the row wants: a cut below the hold band, or
// a raise above it.
func (r ProbeRow) Passes(m float64) bool {
	if r.Cut {
		return m < 1-HoldBand
	}
	return m > 1+HoldBand
}
