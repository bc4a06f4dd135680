package rlcc

import (
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
)

// Real is p in real numbers: target, beta and scale.
func Real(p nicsdk.Params) (target, beta, scale float64) {
	return float64(p.Target) / nicsdk.Q16One, float64(p.Beta) / nicsdk.Q16One, float64(p.Scale) / nicsdk.Q16One
}

// Observation is the observation o_t in real numbers, the float twin of nicsdk.Observation:
// (max(rtt/base − beta, 0)·sqrt(rate) − target)·scale for an RTT of rttNs against the base
// RTT baseNs (0: none yet, inflation 1) at rate (fxp20). It is not clamped.
func Observation(rttNs, baseNs, rate uint32, p nicsdk.Params) float64 {
	target, beta, scale := Real(p)
	infl := 1.0
	if baseNs != 0 {
		infl = float64(rttNs) / float64(baseNs)
	}
	return (max(infl-beta, 0)*math.Sqrt(float64(rate)/nicsdk.LineRate) - target) * scale
}

// RTTFor is the RTT that gives observation o at rate (fxp20) and base RTT baseNs (nonzero):
// Observation's inverse where the inflation is above beta, rounded and clamped to
// [1, MaxUint32].
func RTTFor(o float64, rate, baseNs uint32, p nicsdk.Params) uint32 {
	target, beta, scale := Real(p)
	infl := beta + (o/scale+target)/math.Sqrt(float64(rate)/nicsdk.LineRate)
	return uint32(min(max(math.Round(infl*float64(baseNs)), 1), math.MaxUint32))
}
