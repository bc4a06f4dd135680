// Package rlcc is the RL-CC domain in real numbers, the one home of its float twins and
// constants: the action → multiplier map and the direction it moves the rate, the policy's
// inputs (names, layout), the state sampler the distiller draws from, and the heatmap states
// of nicc diff. The fixed-point runtime (rlcc.h) and its bit-exact Go twins stay in nicsdk,
// which this package builds on; distill, quantize and compiler import this package rather
// than define RL-CC constants.
package rlcc

import "github.com/nicc-dev/nicc/nicsdk"

// HoldBand is the relative change within which a multiplier counts as holding the rate:
// m(y) in [1 − HoldBand, 1 + HoldBand] is hold, above increase, below decrease.
const HoldBand = 0.005

// Multiplier is RL-CC's action map in real numbers (nicsdk.Multiplier is its Q16 twin):
// 1 + 0.2·y for y ≥ 0, 1/(1 − 0.2·y) for y < 0. y is not clamped.
func Multiplier(y float64) float64 {
	if y >= 0 {
		return 1 + 0.2*y
	}
	return 1 / (1 - 0.2*y)
}

// Direction is what a multiplier does to the rate.
type Direction int

const (
	Decrease Direction = iota - 1
	Hold
	Increase
)

// DirectionOf classifies the policy output y by its multiplier (see HoldBand).
func DirectionOf(y float64) Direction {
	switch m := Multiplier(y); {
	case m > 1+HoldBand:
		return Increase
	case m < 1-HoldBand:
		return Decrease
	}
	return Hold
}

// HandlerMultiplier is the multiplier the RL-CC handler applies for the policy output y, in
// real numbers: Multiplier of y clamped to [−1, 1], as nicsdk.Multiplier clamps in Q16.
func HandlerMultiplier(y float64) float64 { return Multiplier(min(max(y, -1), 1)) }

// FixedMultiplier is the handler's integer action map (nicsdk.Multiplier): y in Q16, clamped
// to [-1, 1], as the rate multiplier in Q16.
func FixedMultiplier(y int32) uint32 { return nicsdk.Multiplier(y) }

// OutputOf is the policy output y a multiplier m > 0 stands for, Multiplier inverted:
// (m − 1)/0.2 for m ≥ 1, (1 − 1/m)/0.2 below. It is how eval DIR shows the network's y
// beside a firmware that returns the multiplier (the action map folded into its table).
func OutputOf(m float64) float64 {
	if m >= 1 {
		return (m - 1) / 0.2
	}
	return (1 - 1/m) / 0.2
}
