package rlcc

import (
	"strings"

	"github.com/nicc-dev/nicc/nicsdk"
)

// Names are the RL-CC inputs, the two-state window x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), in
// the order the RL-CC handler feeds them: the names the distiller gives its states.
var Names = []string{"a_prev", "o", "a_prev2", "o_prev"}

// NameList is Names as prose: "a_prev, o, a_prev2, o_prev".
var NameList = strings.Join(Names, ", ")

// GridInput is one RL-CC input on the handler's fixed-point grid: Frac fraction bits, raw
// values Min..Max (the handler clamps what it reads to them).
type GridInput struct {
	Name     string
	Frac     int
	Min, Max int32
}

// Grid is the grid the RL-CC handler computes its inputs on under p for the window l (nicsdk's
// declared Q16 ranges, nicsdk.RLCCInputRanges), in the policy's input order.
func Grid(p nicsdk.Params, l nicsdk.Layout) []GridInput {
	var g []GridInput
	for _, r := range nicsdk.RLCCInputRanges(p, l) {
		g = append(g, GridInput{Name: r.Name, Frac: r.FracBits, Min: r.Min, Max: r.Max})
	}
	return g
}

// Clamped marks, in the policy's input order of l, the inputs whose upper bound is a clamp of a
// value that can grow without bound (every observation and RTT inflation; for the default
// layout o_t and o_{t-1}): a split above it has a branch the firmware never takes. The action
// and the rate are bounded by the handler's own arithmetic.
func Clamped(l nicsdk.Layout) []bool {
	var c []bool
	for _, s := range l.Slots() {
		c = append(c, s.Feature == nicsdk.FeatObs || s.Feature == nicsdk.FeatInfl)
	}
	return c
}
