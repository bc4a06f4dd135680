package compiler

import (
	"fmt"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The RL-CC input layout in the compiler. Every stage that depends on the window the handler
// feeds a compiled policy reads it from loaded.layout: the grid and clamp marks of the
// policy's inputs (rlccInputs, quantize's clamped splits, verify's policy vectors), the
// handler glue (handlerC), verify's golden handler and event sequences (seqGen), and sim's
// golden and firmware controllers.

// layout is the window the RL-CC handler feeds this compile's policy: the layout its
// inputs' names form (--inputs, --history, --features; load's InputLayout), else the default,
// x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}).
func (ld *loaded) Layout() nicsdk.Layout {
	if ld.InLayout == nil {
		return nicsdk.DefaultLayout
	}
	return ld.InLayout.Layout()
}

// CheckLayout refuses a layout the handler cannot feed beside the policy's state words (an
// LSTM keeps some in the same six context words as the layout's older states), and another
// layout than the default for the DOCA program, whose runtime (rlcc_doca.h and its Go twin
// nicsdk.DOCARuntime) feeds the default one.
func (c *golden) CheckLayout() error {
	l := c.Layout()
	if err := l.Check(c.Policy.StateWords()); err != nil {
		return fmt.Errorf("%s: %w", c.Opt.Model, err)
	}
	if c.Opt.DOCA && !l.IsDefault() {
		return fmt.Errorf("%s: the DOCA program feeds the default input layout (%v), not %v", c.Opt.Model, nicsdk.DefaultLayout, l)
	}
	return nil
}

// handlerGlue is the C that defines the engine entry over policy for the layout l: nicsdk's
// glue for a stateless policy returning y or the multiplier, or a stateful one keeping words
// context words. l must pass l.Check(words) (CheckLayout).
func handlerGlue(p nicsdk.Params, l nicsdk.Layout, policy string, words int, out nicsdk.PolicyOut) string {
	switch {
	case words > 0:
		return nicsdk.HandlerExC(p, l, policy, words, out)
	case out == nicsdk.OutM:
		return nicsdk.HandlerMC(p, l, policy)
	}
	return nicsdk.HandlerC(p, l, policy)
}

// slotIndex is the index of feature f at lag in l's inputs, or -1.
func slotIndex(l nicsdk.Layout, f nicsdk.Feature, lag int) int {
	for i, s := range l.Slots() {
		if s == (nicsdk.Slot{Feature: f, Lag: lag}) {
			return i
		}
	}
	return -1
}

// layoutWords names the context words a layout's older states take, for handler.c's header
// comment: "" for none (the default layout).
func layoutWords(l nicsdk.Layout) string {
	if n := l.ExtraWords(); n > 0 {
		return fmt.Sprintf(" and ctx->data[%d..%d] (the input layout's older states: %v)", nicsdk.CtxWords-n, nicsdk.CtxWords-1, l)
	}
	return ""
}
