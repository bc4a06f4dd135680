package nicsdk

import (
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// handlerWCETLimit guards the WCET of the handler skeleton (testdata/handler.c: rlcc.h's
// whole decision around a policy of a few operations on all four inputs) on the default
// profile (dpa) against regressions. It was 268 cycles with a 64-bit divu (66 cycles, an
// assumed cost) for the RTT inflation; 198 since the inflation's quotient is built from a
// reciprocal table and multiplications (rlcc_div_q16) and the handler works in zero-extended
// 64-bit registers.
const handlerWCETLimit = 205

// skeletonWCET is the static WCET of the engine entry of the test firmware name, checked
// loop-free and against the cycles of every event of flows random flows (draw) run through it:
// the report, the most cycles measured, the events run and the profile's clock.
func skeletonWCET(t *testing.T, name string, flows int, draw func() (FlowCtx, []Event)) (rep *wcet.Report, maxc, n uint64, clockHz float64) {
	t.Helper()
	im := firmware(t, name)
	rep, err := wcet.Bound(im, HandlerEntry, nil, wcet.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(rep.Loops) != 0 {
		t.Errorf("%s: the handler has loops: %+v", name, rep.Loops)
	}
	m, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range flows {
		ctx0, events := draw()
		m.ResetAlloc()
		ctx, _ := m.Alloc(CtxBytes, 4)
		m.WriteBytes(ctx, ctx0.Bytes())
		ev, _ := m.Alloc(EventBytes, EventAlign)
		for _, e := range events {
			m.WriteBytes(ev, e.Bytes())
			res, err := m.Call(HandlerEntry, ev, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cycles > rep.Cycles {
				t.Fatalf("%s: event %+v took %d cycles, above the WCET %d", name, e, res.Cycles, rep.Cycles)
			}
			maxc, n = max(maxc, res.Cycles), n+1
		}
	}
	return rep, maxc, n, m.Profile().ClockHz
}

func TestHandlerWCET(t *testing.T) {
	t.Parallel()
	// Measured cycles over random flows never exceed the bound.
	r := rng(10)
	rep, maxc, n, clock := skeletonWCET(t, "handler", 100, func() (FlowCtx, []Event) {
		f := randFlow(r, 200)
		return f.ctx0, f.events
	})
	t.Logf("handler skeleton on %s: WCET %d cycles (%d instructions, %.3f µs at %.3g Hz, an assumed clock); "+
		"max measured over %d events %d (tightness %.2f)", rep.Profile, rep.Cycles, rep.Insns,
		float64(rep.Cycles)/clock*1e6, clock, n, maxc, float64(rep.Cycles)/float64(maxc))
	if rep.Cycles > handlerWCETLimit {
		t.Errorf("handler skeleton WCET %d cycles, over %d", rep.Cycles, handlerWCETLimit)
	}
}

func TestHandlerStateWCET(t *testing.T) {
	t.Parallel()
	// The skeleton of a stateful policy returning the multiplier (testdata/handler_state.c:
	// RLCC_DEFINE_HANDLER_EX with two state words and RLCC_OUT_M), for the record, next to
	// the stateless one; loop-free, and every measured event within the bound.
	r := rng(14)
	rep, maxc, _, _ := skeletonWCET(t, "handler_state", 50, func() (FlowCtx, []Event) {
		f := randFlowEx(r, 200)
		return f.ctx0, f.events
	})
	t.Logf("stateful (2 words, RLCC_OUT_M) skeleton on %s: WCET %d cycles (%d instructions); max measured %d",
		rep.Profile, rep.Cycles, rep.Insns, maxc)
}

func TestHelperWCET(t *testing.T) {
	t.Parallel()
	// The helpers are loop-free; their bounds, for the record.
	im := firmware(t, "fw")
	for _, e := range []string{"t_infl", "t_div", "t_sqrt", "t_obs", "t_mult", "t_update"} {
		rep, err := wcet.Bound(im, e, nil, wcet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Loops) != 0 {
			t.Errorf("%s has loops: %+v", e, rep.Loops)
		}
		t.Logf("%-9s WCET %3d cycles, %3d instructions", e, rep.Cycles, rep.Insns)
	}
}
