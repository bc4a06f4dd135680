package nicsdk

import (
	"fmt"
	"math/bits"
)

// Feature is one per-state signal the RL-CC handler can feed a policy (the NVlabs/RLCC
// agent_features it has the signal for).
type Feature uint8

const (
	FeatAction Feature = iota // the multiplier the previous decision applied (RL-CC's "action"), Q16
	FeatObs                   // the observation o (RL-CC's "adpg_reward"), Q16
	FeatInfl                  // the RTT inflation RTT/base (RL-CC's "rtt_inflation"), Q16
	FeatRate                  // the current rate, a fraction of line rate (RL-CC's "cur_rate"), Q16
	NumFeatures
)

// FeatureMask is a set of features, bit f for Feature f.
type FeatureMask uint8

// Has reports whether m holds f.
func (m FeatureMask) Has(f Feature) bool { return m&(1<<f) != 0 }

// Count is the number of features in m.
func (m FeatureMask) Count() int { return bits.OnesCount8(uint8(m)) }

// Layout is the shape of the window the RL-CC handler feeds a policy: History states, newest
// first, each the features of Features in Feature order. The policy's input x is that window
// flattened: x = (state t, state t-1, ..., state t-History+1), so the default layout (history 2,
// action and observation) is x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}). A model whose inputs come in
// another order is put in this one when it is loaded.
type Layout struct {
	History  int
	Features FeatureMask
}

// DefaultLayout is the RL-CC papers' window: two states of (action, observation).
var DefaultLayout = Layout{History: 2, Features: 1<<FeatAction | 1<<FeatObs}

// Inputs is the number of policy inputs: History times the features per state.
func (l Layout) Inputs() int { return l.History * l.Features.Count() }

// Slot is one policy input: a feature of the state Lag decisions back (0: the newest).
type Slot struct {
	Feature Feature
	Lag     int
}

// Slots are the layout's inputs in the policy's order.
func (l Layout) Slots() []Slot {
	var s []Slot
	for lag := range l.History {
		for f := range NumFeatures {
			if l.Features.Has(f) {
				s = append(s, Slot{f, lag})
			}
		}
	}
	return s
}

// IsDefault reports whether l is DefaultLayout.
func (l Layout) IsDefault() bool { return l == DefaultLayout }

// String is "history 2, features action+obs" style prose.
func (l Layout) String() string {
	names := [NumFeatures]string{"action", "obs", "infl", "rate"}
	s := ""
	for f := range NumFeatures {
		if l.Features.Has(f) {
			if s != "" {
				s += "+"
			}
			s += names[f]
		}
	}
	return fmt.Sprintf("history %d, features %s", l.History, s)
}
