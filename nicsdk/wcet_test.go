package nicsdk

import (
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// handlerWCETLimit guards the WCET of the handler skeleton (testdata/handler.c: rlcc.h's
// whole decision around a policy of a few operations on all four inputs) on the default
// profile (dpa) against regressions. It was 268 cycles with a 64-bit divu (66 cycles, an
// assumed cost) for the RTT inflation; 198 since the inflation's quotient is built from a
// reciprocal table and multiplications (rlcc_div_q16) and the handler works in zero-extended
// 64-bit registers.
const handlerWCETLimit = 205

func TestHandlerWCET(t *testing.T) {
	im := firmware(t, "handler")
	rep, err := fwsim.WCET(im, "nicc_on_event", nil, fwsim.WCETOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Loops) != 0 {
		t.Errorf("the handler has loops: %+v", rep.Loops)
	}
	m, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Measured cycles over random flows never exceed the bound.
	r := rng(10)
	var maxc, n uint64
	for range 100 {
		f := randFlow(r, 200)
		m.ResetAlloc()
		ctx, _ := m.Alloc(CtxBytes, 4)
		m.WriteBytes(ctx, f.ctx0.Bytes())
		ev, _ := m.Alloc(EventBytes, EventAlign)
		for _, e := range f.events {
			m.WriteBytes(ev, e.Bytes())
			res, err := m.Call("nicc_on_event", ev, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cycles > rep.Cycles {
				t.Fatalf("event %+v took %d cycles, above the WCET %d", e, res.Cycles, rep.Cycles)
			}
			maxc, n = max(maxc, res.Cycles), n+1
		}
	}
	t.Logf("handler skeleton on %s: WCET %d cycles (%d instructions, %.3f µs at %.3g Hz, an assumed clock); "+
		"max measured over %d events %d (tightness %.2f)", rep.Profile, rep.Cycles, rep.Insns,
		float64(rep.Cycles)/m.Profile().ClockHz*1e6, m.Profile().ClockHz, n, maxc, float64(rep.Cycles)/float64(maxc))
	if rep.Cycles > handlerWCETLimit {
		t.Errorf("handler skeleton WCET %d cycles, over %d", rep.Cycles, handlerWCETLimit)
	}
}

func TestHandlerStateWCET(t *testing.T) {
	// The skeleton of a stateful policy returning the multiplier (testdata/handler_state.c:
	// RLCC_DEFINE_HANDLER_EX with two state words and RLCC_OUT_M), for the record, next to
	// the stateless one; loop-free, and every measured event within the bound.
	im := firmware(t, "handler_state")
	rep, err := fwsim.WCET(im, HandlerEntry, nil, fwsim.WCETOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Loops) != 0 {
		t.Errorf("the handler has loops: %+v", rep.Loops)
	}
	m, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(14)
	var maxc uint64
	for range 50 {
		f := randFlowEx(r, 200)
		m.ResetAlloc()
		ctx, _ := m.Alloc(CtxBytes, 4)
		m.WriteBytes(ctx, f.ctx0.Bytes())
		ev, _ := m.Alloc(EventBytes, EventAlign)
		for _, e := range f.events {
			m.WriteBytes(ev, e.Bytes())
			res, err := m.Call(HandlerEntry, ev, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cycles > rep.Cycles {
				t.Fatalf("event %+v took %d cycles, above the WCET %d", e, res.Cycles, rep.Cycles)
			}
			maxc = max(maxc, res.Cycles)
		}
	}
	t.Logf("stateful (2 words, RLCC_OUT_M) skeleton on %s: WCET %d cycles (%d instructions); max measured %d",
		rep.Profile, rep.Cycles, rep.Insns, maxc)
}

func TestHelperWCET(t *testing.T) {
	// The helpers are loop-free; their bounds, for the record.
	im := firmware(t, "fw")
	for _, e := range []string{"t_infl", "t_div", "t_sqrt", "t_obs", "t_mult", "t_update"} {
		rep, err := fwsim.WCET(im, e, nil, fwsim.WCETOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Loops) != 0 {
			t.Errorf("%s has loops: %+v", e, rep.Loops)
		}
		t.Logf("%-9s WCET %3d cycles, %3d instructions", e, rep.Cycles, rep.Insns)
	}
}
