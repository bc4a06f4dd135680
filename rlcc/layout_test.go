package rlcc

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

func TestSlotNames(t *testing.T) {
	l := nicsdk.Layout{History: 3, Features: 1<<nicsdk.NumFeatures - 1}
	want := []string{"a_prev", "o", "infl", "rate", "a_prev2", "o_prev", "infl_prev", "rate_prev", "a_prev3", "o_prev2", "infl_prev2", "rate_prev2"}
	if got := LayoutNames(l); !reflect.DeepEqual(got, want) {
		t.Fatalf("LayoutNames = %q, want %q", got, want)
	}
	if got := LayoutNames(nicsdk.DefaultLayout); !reflect.DeepEqual(got, Names) {
		t.Errorf("default layout's names %q, want Names %q", got, Names)
	}
	for i, n := range want {
		s, ok := ParseSlot(n)
		if !ok || s != l.Slots()[i] {
			t.Errorf("ParseSlot(%q) = %v, %v; want %v", n, s, ok, l.Slots()[i])
		}
	}
}

func TestParseSlotAliases(t *testing.T) {
	for n, want := range map[string]nicsdk.Slot{
		"obs": {Feature: nicsdk.FeatObs, Lag: 0}, "OBS_PREV": {Feature: nicsdk.FeatObs, Lag: 1}, " adpg_reward_prev2 ": {Feature: nicsdk.FeatObs, Lag: 2},
		"action": {Feature: nicsdk.FeatAction, Lag: 0}, "action_prev": {Feature: nicsdk.FeatAction, Lag: 1}, "action_prev3": {Feature: nicsdk.FeatAction, Lag: 3},
		"a_prev4": {Feature: nicsdk.FeatAction, Lag: 3}, "rtt_inflation_prev": {Feature: nicsdk.FeatInfl, Lag: 1}, "cur_rate": {Feature: nicsdk.FeatRate, Lag: 0},
		"rate_prev11": {Feature: nicsdk.FeatRate, Lag: 11},
	} {
		if s, ok := ParseSlot(n); !ok || s != want {
			t.Errorf("ParseSlot(%q) = %v, %v; want %v", n, s, ok, want)
		}
	}
	for _, n := range []string{"", "a", "a_prev1", "a_prev0", "a_prev02", "o_prev1", "o_prev12", "o_prev99999999999999999999",
		"o_prev_prev", "o _prev", "input[0]", "x", "action_prev-2", "a_prev+2", "prev", "_prev"} {
		if s, ok := ParseSlot(n); ok {
			t.Errorf("ParseSlot(%q) = %v, want refused", n, s)
		}
	}
}

func TestAuthorsNames(t *testing.T) {
	got := AuthorsNames(AuthorsFeatures, AuthorsHistory)
	want := []string{"action_prev", "adpg_reward_prev", "action", "adpg_reward"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AuthorsNames = %q, want %q", got, want)
	}
	l, perm, err := ParseLayout(got)
	if err != nil || l != nicsdk.DefaultLayout || !reflect.DeepEqual(perm, []int{2, 3, 0, 1}) {
		t.Errorf("ParseLayout(authors) = %v, %v, %v", l, perm, err)
	}
	got = AuthorsNames([]string{"cur_rate", "action"}, 3)
	want = []string{"cur_rate_prev2", "action_prev2", "cur_rate_prev", "action_prev", "cur_rate", "action"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AuthorsNames = %q, want %q", got, want)
	}
}

func TestParseLayout(t *testing.T) {
	for _, c := range []struct {
		names []string
		l     nicsdk.Layout
		perm  []int
	}{
		{Names, nicsdk.DefaultLayout, []int{0, 1, 2, 3}},
		{[]string{"a_prev2", "o_prev", "a_prev", "o"}, nicsdk.DefaultLayout, []int{2, 3, 0, 1}},
		{[]string{"o"}, nicsdk.Layout{History: 1, Features: 1 << nicsdk.FeatObs}, []int{0}},
		{[]string{"infl_prev", "rate", "rate_prev", "infl"}, nicsdk.Layout{History: 2, Features: 1<<nicsdk.FeatInfl | 1<<nicsdk.FeatRate}, []int{2, 1, 3, 0}},
	} {
		l, perm, err := ParseLayout(c.names)
		if err != nil || l != c.l || !reflect.DeepEqual(perm, c.perm) {
			t.Errorf("ParseLayout(%q) = %v, %v, %v; want %v, %v", c.names, l, perm, err, c.l, c.perm)
		}
	}
	for _, c := range []struct {
		names []string
		msg   string
	}{
		{[]string{"a_prev", "o", "a_prev2", "x"}, `input 4 "x" is not an RL-CC input name`},
		{[]string{"a_prev", "obs", "o", "o_prev"}, `inputs "obs" and "o" are both o`},
		{[]string{"a_prev", "o", "o_prev2", "a_prev2", "o_prev"}, `o_prev2 needs history 3, features action+obs (6 inputs), but a_prev3 is missing`},
		{[]string{"a_prev", "o", "a_prev2"}, `a_prev2 needs history 2, features action+obs (4 inputs), but o_prev is missing`},
		{nil, "no inputs"},
	} {
		_, _, err := ParseLayout(c.names)
		if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseLayout(%q) = %v; want one line with %q", c.names, err, c.msg)
		}
	}
}

func TestParseFeatures(t *testing.T) {
	m, order, err := ParseFeatures("adpg_reward, ACTION,cur_rate")
	if err != nil || m != 1<<nicsdk.FeatAction|1<<nicsdk.FeatObs|1<<nicsdk.FeatRate ||
		!reflect.DeepEqual(order, []nicsdk.Feature{nicsdk.FeatObs, nicsdk.FeatAction, nicsdk.FeatRate}) {
		t.Errorf("ParseFeatures = %v, %v, %v", m, order, err)
	}
	for list, msg := range map[string]string{"action,action": `"action" is listed twice`, "action,reward": `feature "reward" is not`, "": `feature "" is not`} {
		if _, _, err := ParseFeatures(list); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseFeatures(%q) = %v, want %q", list, err, msg)
		}
	}
}
