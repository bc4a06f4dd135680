package compiler

import (
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// Small helpers the compile shares with the lab (lab/), which reaches them through lab_api.go.

// policyOut is what the RL-CC handler takes from p: the multiplier (a folded output table) or y.
func policyOut(p quantize.Policy) nicsdk.PolicyOut {
	if p.ReturnsMultiplier() {
		return nicsdk.OutM
	}
	return nicsdk.OutY
}
