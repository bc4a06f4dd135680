package rlcc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/nicsdk"
)

// MaxHistory bounds the history a layout may name: a past state takes at least one 32-bit word
// of the 48-byte flow context. The handler may support less (h-handler's lane decides).
const MaxHistory = nicsdk.CtxBytes / 4

// featureNames are each feature's names, the canonical (nicc's) first and then the NVlabs/RLCC
// agent_features name, in nicsdk.Feature order.
var featureNames = [nicsdk.NumFeatures][]string{
	nicsdk.FeatAction: {"a", "action"},
	nicsdk.FeatObs:    {"o", "adpg_reward", "obs"},
	nicsdk.FeatInfl:   {"infl", "rtt_inflation"},
	nicsdk.FeatRate:   {"rate", "cur_rate"},
}

// AuthorsFeatures are the NVlabs/RLCC agent_features of its public config/rlcc.yaml, and
// AuthorsHistory its history_length.
var (
	AuthorsFeatures = []string{"action", "adpg_reward"}
	AuthorsHistory  = 2
)

// FeatureNames lists the names ParseFeature accepts, for messages.
const FeatureNames = "action, adpg_reward (o), rtt_inflation (infl), cur_rate (rate)"

// ParseFeature reads a feature's name: nicc's (a, o, obs, infl, rate) or the authors'
// (action, adpg_reward, rtt_inflation, cur_rate), case-insensitive and trimmed.
func ParseFeature(name string) (nicsdk.Feature, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for f, names := range featureNames {
		for _, alt := range names {
			if n == alt {
				return nicsdk.Feature(f), true
			}
		}
	}
	return 0, false
}

// ParseFeatures reads a comma-separated list of features (ParseFeature), each once; the
// error names the bad or repeated one.
func ParseFeatures(list string) (nicsdk.FeatureMask, []nicsdk.Feature, error) {
	var m nicsdk.FeatureMask
	var order []nicsdk.Feature
	for _, n := range strings.Split(list, ",") {
		f, ok := ParseFeature(n)
		if !ok {
			return 0, nil, fmt.Errorf("feature %q is not one the handler feeds (%s)", strings.TrimSpace(n), FeatureNames)
		}
		if m.Has(f) {
			return 0, nil, fmt.Errorf("feature %q is listed twice", strings.TrimSpace(n))
		}
		m |= 1 << f
		order = append(order, f)
	}
	return m, order, nil
}

// SlotName is a slot's canonical name: a_prev, a_prev2, a_prev3 ... for the action (lag j is
// a_prev{j+1}, as nicc always named it); o, o_prev, o_prev2 ... for the observation, and
// infl..., rate... the same way.
func SlotName(s nicsdk.Slot) string {
	if s.Feature == nicsdk.FeatAction {
		if s.Lag == 0 {
			return "a_prev"
		}
		return "a_prev" + strconv.Itoa(s.Lag+1)
	}
	return featureNames[s.Feature][0] + lagSuffix(s.Lag)
}

// lagSuffix is "" for lag 0, "_prev" for 1, "_prev{j}" beyond.
func lagSuffix(lag int) string {
	switch lag {
	case 0:
		return ""
	case 1:
		return "_prev"
	}
	return "_prev" + strconv.Itoa(lag)
}

// LayoutNames are l's canonical input names in the policy's order (nicsdk.Layout.Slots).
func LayoutNames(l nicsdk.Layout) []string {
	var names []string
	for _, s := range l.Slots() {
		names = append(names, SlotName(s))
	}
	return names
}

// AuthorsNames are the inputs of a network trained by NVlabs/RLCC (FeatureHistory) with
// these agent_features and history_length: the states oldest first (state t-history+1 first),
// each the features in the order given, named by the features' names as given with the
// _prev/_prev{j} suffix.
func AuthorsNames(features []string, history int) []string {
	var names []string
	for lag := history - 1; lag >= 0; lag-- {
		for _, f := range features {
			names = append(names, strings.TrimSpace(f)+lagSuffix(lag))
		}
	}
	return names
}

// ParseSlot reads one input name: a canonical name (SlotName), obs/obs_prev for o, or an
// authors' feature name with the o-style suffix (action, action_prev, adpg_reward_prev2 ...).
// Case-insensitive, trimmed. Lags from MaxHistory on are not names.
func ParseSlot(name string) (nicsdk.Slot, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if rest, ok := strings.CutPrefix(n, "a_prev"); ok {
		if rest == "" {
			return nicsdk.Slot{Feature: nicsdk.FeatAction}, true
		}
		j, ok := lagNumber(rest)
		return nicsdk.Slot{Feature: nicsdk.FeatAction, Lag: j - 1}, ok
	}
	base, suffix, prev := strings.Cut(n, "_prev")
	lag := 0
	if prev {
		lag = 1
		if suffix != "" {
			j, ok := lagNumber(suffix)
			if !ok {
				return nicsdk.Slot{}, false
			}
			lag = j
		}
	}
	f, ok := ParseFeature(base)
	if !ok || base == "a" || base != strings.TrimSpace(base) {
		return nicsdk.Slot{}, false
	}
	return nicsdk.Slot{Feature: f, Lag: lag}, true
}

// lagNumber reads the j of a _prev{j} suffix: 2 to MaxHistory-1, no sign or leading zero.
func lagNumber(s string) (int, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' || len(s) > 2 {
		return 0, false
	}
	j, err := strconv.Atoi(s)
	return j, err == nil && j >= 2 && j < MaxHistory
}

// ParseLayout reads a model's input names (in the model's order) as an RL-CC layout: the
// layout they form and perm, model input i being the policy's slot perm[i] (its index in
// Layout.Slots). The error is one line naming the bad, repeated or missing name and the
// layout the names looked like.
func ParseLayout(names []string) (nicsdk.Layout, []int, error) {
	slots := make([]nicsdk.Slot, len(names))
	var l nicsdk.Layout
	deepest := -1
	for i, n := range names {
		s, ok := ParseSlot(n)
		if !ok {
			return nicsdk.Layout{}, nil, fmt.Errorf("input %d %q is not an RL-CC input name (a_prev, o, a_prev2, o_prev ...; or %s with _prev, _prev2 ...)", i+1, n, FeatureNames)
		}
		for k := range i {
			if slots[k] == s {
				return nicsdk.Layout{}, nil, fmt.Errorf("inputs %q and %q are both %s", names[k], n, SlotName(s))
			}
		}
		slots[i] = s
		l.Features |= 1 << s.Feature
		if s.Lag+1 > l.History {
			l.History, deepest = s.Lag+1, i
		}
	}
	if len(names) == 0 {
		return nicsdk.Layout{}, nil, fmt.Errorf("no inputs")
	}
	order := l.Slots()
	perm := make([]int, len(names))
	for i, s := range slots {
		for k, o := range order {
			if o == s {
				perm[i] = k
			}
		}
	}
	if len(names) < len(order) {
		for _, o := range order {
			if !containsSlot(slots, o) {
				return nicsdk.Layout{}, nil, fmt.Errorf("%s needs %s (%d inputs), but %s is missing",
					names[deepest], l, l.Inputs(), SlotName(o))
			}
		}
	}
	return l, perm, nil
}

func containsSlot(slots []nicsdk.Slot, s nicsdk.Slot) bool {
	for _, o := range slots {
		if o == s {
			return true
		}
	}
	return false
}
