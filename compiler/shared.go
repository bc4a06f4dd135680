package compiler

import (
	"strconv"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// Small helpers the compile shares with the lab (lab/), which reaches them through lab_api.go.

// num prints v in the fewest digits that read back as v.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// num3 prints v in 4 significant digits.
func num3(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// policyOut is what the RL-CC handler takes from p: the multiplier (a folded output table) or y.
func policyOut(p quantize.Policy) nicsdk.PolicyOut {
	if p.ReturnsMultiplier() {
		return nicsdk.OutM
	}
	return nicsdk.OutY
}
