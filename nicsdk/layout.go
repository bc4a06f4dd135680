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

// OrDefault is l, or DefaultLayout for the zero Layout (a field left unset).
func (l Layout) OrDefault() Layout {
	if l == (Layout{}) {
		return DefaultLayout
	}
	return l
}

// Inputs is the number of policy inputs: History times the features per state.
func (l Layout) Inputs() int { return l.History * l.Features.Count() }

// Slot is one policy input: a feature of the state Lag decisions back (0: the newest).
type Slot struct {
	Feature Feature
	Lag     int
}

// Name is the slot's input name in nicsdk's ranges (RLCCInputRanges): the action a_prev,
// a_prev2, a_prev3, ... (a_{t-1}, a_{t-2}, ...), the others obs, infl, rate at lag 0 and
// obs_prev, obs_prev2, ... (o_{t-1}, o_{t-2}, ...) further back.
func (s Slot) Name() string {
	if s.Feature == FeatAction {
		if s.Lag == 0 {
			return "a_prev"
		}
		return fmt.Sprintf("a_prev%d", s.Lag+1)
	}
	n := [NumFeatures]string{"", "obs", "infl", "rate"}[s.Feature]
	switch s.Lag {
	case 0:
		return n
	case 1:
		return n + "_prev"
	}
	return fmt.Sprintf("%s_prev%d", n, s.Lag)
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

// The layout's history words. Words 0..5 of the flow context are RL-CC's for every layout
// (CtxRate .. CtxFlags): they hold a_{t-1} and a_{t-2} (CtxA1, CtxA2) and o_{t-1} (CtxO1), the
// default layout's history. The states further back, and every past RTT inflation and rate
// (the default layout has none), are kept in the words above, from the top down: data[11],
// data[10], ...; a stateful policy's words grow from data[6] up, so the two may share the six
// words as long as their sum is at most StateWordsMax (Layout.Check). In the top words, feature
// by feature in Feature order, lag by lag from the first one kept there (2 for the action and
// the observation, 1 for the inflation and the rate): Layout.Word.

// HistoryMax is the longest window any layout can have: one action or observation a state
// with six history words (lags 2..7) above the default's.
const HistoryMax = 8

// AllFeatures is the mask of every feature the handler has.
const AllFeatures FeatureMask = 1<<NumFeatures - 1

// firstKept is the first lag of f kept in the top words: the action's lags 0 and 1 and the
// observation's lag 1 are in words 2..4 (lag 0 of the others is computed from the event).
func firstKept(f Feature) int {
	if f == FeatAction || f == FeatObs {
		return 2
	}
	return 1
}

// extra is the number of top words f takes in a window of h states.
func extra(h int, f Feature) int { return max(h-firstKept(f), 0) }

// ExtraWords is the number of context words beyond RL-CC's six (words 6..11) the layout's
// history takes: 0 for the default layout.
func (l Layout) ExtraWords() int {
	n := 0
	for f := range NumFeatures {
		if l.Features.Has(f) {
			n += extra(l.History, f)
		}
	}
	return n
}

// Word is the context word holding feature f at lag (lag >= 1) as the handler reads it on an
// RTT event, for f in the layout: CtxA1 (the action at lag 0), CtxA2 or CtxO1 (lag 1), or a top
// word. It is -1 for a lag the context does not keep (the observation, inflation and rate at
// lag 0 are the event's own), a lag beyond the window or a feature not in the layout.
func (l Layout) Word(f Feature, lag int) int {
	switch {
	case !l.Features.Has(f) || lag < 0 || lag >= l.History:
		return -1
	case f == FeatAction && lag == 0:
		return CtxA1
	case f == FeatAction && lag == 1:
		return CtxA2
	case f == FeatObs && lag == 1:
		return CtxO1
	case lag < firstKept(f):
		return -1
	}
	n := 0
	for g := range f {
		if l.Features.Has(g) {
			n += extra(l.History, g)
		}
	}
	return CtxWords - 1 - n - (lag - firstKept(f))
}

// Check reports whether the handler can feed l to a policy that keeps stateWords context words
// of its own: at least one state of at least one feature, and l's history words and the
// policy's together within the six words above RL-CC's (ExtraWords + stateWords <=
// StateWordsMax).
func (l Layout) Check(stateWords int) error {
	switch {
	case l.History < 1 || l.History > HistoryMax:
		return fmt.Errorf("nicsdk: a window of %d states: want 1 to %d", l.History, HistoryMax)
	case l.Features == 0 || l.Features&^AllFeatures != 0:
		return fmt.Errorf("nicsdk: feature mask %#x: want a non-empty set of action, obs, infl and rate", uint8(l.Features))
	case stateWords < 0 || stateWords > StateWordsMax:
		return fmt.Errorf("nicsdk: %d policy state words, want 0..%d", stateWords, StateWordsMax)
	case l.ExtraWords()+stateWords > StateWordsMax:
		return fmt.Errorf("nicsdk: the layout (%v) keeps %d context words of history and the policy %d of state: %d, over the %d the 48-byte context has beyond RL-CC's (history %d is the longest that fits)",
			l, l.ExtraWords(), stateWords, l.ExtraWords()+stateWords, StateWordsMax, l.MaxHistory(stateWords))
	}
	return nil
}

// MaxHistory is the longest window of l's features that fits beside stateWords words of policy
// state (0 when none does).
func (l Layout) MaxHistory(stateWords int) int {
	h := 0
	for k := 1; k <= HistoryMax; k++ {
		if (Layout{k, l.Features}).ExtraWords()+stateWords <= StateWordsMax {
			h = k
		}
	}
	return h
}

// C is the mask as rlcc.h's RLCC_FEAT_* constants ORed: "RLCC_FEAT_ACTION | RLCC_FEAT_OBS".
func (m FeatureMask) C() string {
	names := [NumFeatures]string{"RLCC_FEAT_ACTION", "RLCC_FEAT_OBS", "RLCC_FEAT_INFL", "RLCC_FEAT_RATE"}
	s := ""
	for f := range NumFeatures {
		if m.Has(f) {
			if s != "" {
				s += " | "
			}
			s += names[f]
		}
	}
	return s
}
