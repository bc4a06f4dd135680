package model

import (
	"maps"
	"math"
	"slices"
)

// RLCCKeys are the RL-CC handler parameters a policy file may carry (Model.RLCC), in real
// numbers: target, beta and scale of the observation, the min and init rates as fractions of
// line rate, and the base RTT in µs. Their ranges are the handler's, checked where a command
// uses them; the model refuses keys not listed here and values that are not finite.
var RLCCKeys = []string{"target", "beta", "scale", "min_rate", "init_rate", "base_rtt_us"}

// validateRLCC refuses a parameter map with a key RLCCKeys does not list or a value that is
// not a finite number.
func validateRLCC(p map[string]float64) error {
	if len(p) > len(RLCCKeys) {
		return Errorf("rlcc has %d parameters, want at most the %d of %v", len(p), len(RLCCKeys), RLCCKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !slices.Contains(RLCCKeys, k) {
			return Errorf("rlcc parameter %q is not one of %v", k, RLCCKeys)
		}
		if v := p[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return Errorf("rlcc parameter %q is %v, want a finite number", k, v)
		}
	}
	return nil
}
