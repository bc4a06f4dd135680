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

// layoutWords names the context words a layout's older states take, for handler.c's header
// comment: "" for none (the default layout).
func layoutWords(l nicsdk.Layout) string {
	if n := l.ExtraWords(); n > 0 {
		return fmt.Sprintf(" and ctx->data[%d..%d] (the input layout's older states: %v)", nicsdk.CtxWords-n, nicsdk.CtxWords-1, l)
	}
	return ""
}
