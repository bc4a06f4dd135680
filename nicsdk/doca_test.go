package nicsdk

import (
	"strings"
	"testing"
)

// The DOCA twin's own rules; compiler's verify holds it to the C bit for bit.

func TestDOCAParamsOK(t *testing.T) {
	t.Parallel()
	p := DefaultParams() // target 4194, scale 786432: ceil(target*scale/2^16) = 50328
	for _, c := range []struct {
		target, beta, scale uint32
		ok                  bool
	}{
		{p.Target, p.Beta, p.Scale, true},
		{0, 0, 1, true},
		{p.Target / 2, 1 << 24, p.Scale, true},
		{p.Target + 1, p.Beta, p.Scale, false},    // lowers the observation's clamp below the compiled range
		{p.Target * 2, p.Beta, p.Scale / 2, true}, // the same product
		{1<<20 + 1, p.Beta, 1, false},             // above 16.0
		{p.Target, 1<<24 + 1, p.Scale, false},     // beta above 256
		{p.Target, p.Beta, 0, false},              // scale 0
		{0, p.Beta, 1<<24 + 1, false},             // scale above 256
		{p.Target * 3 / 2, p.Beta, p.Scale * 2 / 3, true},
	} {
		if got := DOCAParamsOK(c.target, c.beta, c.scale, p); got != c.ok {
			t.Errorf("DOCAParamsOK(%d, %d, %d) = %v, want %v", c.target, c.beta, c.scale, got, c.ok)
		}
	}
}

func TestDOCASetParamsAllOrNothing(t *testing.T) {
	t.Parallel()
	r := DOCARuntime{Compiled: DefaultParams()}
	if m := r.Init(); m != DOCADisabledEvents {
		t.Fatalf("Init: mask %#x", m)
	}
	want := r.ParamsOf(0, DOCASlot)
	for _, c := range []struct {
		port, slot, base uint32
		vals             []uint32
	}{
		{0, DOCASlot, DOCAParamBeta, []uint32{1 << 20, 0}}, // beta fine, scale 0
		{0, DOCASlot, DOCAParamScale, []uint32{1, 1}},      // a fourth parameter
		{0, 1, DOCAParamTarget, []uint32{1}},               // not the algorithm's slot
		{0, DOCASlot, DOCAParams + 1, nil},                 // no such first parameter
		// ports the device does not have, with values port 0 would take
		{DOCAPorts, DOCASlot, DOCAParamBeta, []uint32{2 << 16}},
		{DOCAPorts + 1, DOCASlot, DOCAParamBeta, []uint32{2 << 16}},
		{0xffffffff, DOCASlot, DOCAParamBeta, []uint32{2 << 16}},
	} {
		if s := r.SetParams(c.port, c.slot, c.base, c.vals); s != DOCAStatusFail {
			t.Errorf("SetParams(%+v) = %d, want refused", c, s)
		}
		if got := r.ParamsOf(0, DOCASlot); got != want {
			t.Fatalf("after a refused change: %v, want %v", got, want)
		}
	}
	if s := r.SetParams(5, DOCASlot, DOCAParamBeta, []uint32{2 << 16, 6 << 16}); s != DOCAStatusFail || r.ParamsOf(1, DOCASlot) != want {
		t.Fatalf("SetParams beta 2, scale 6 on port 5: %d, port 1 then %v", s, r.ParamsOf(1, DOCASlot))
	}
	if s := r.SetParams(1, DOCASlot, DOCAParamBeta, []uint32{2 << 16, 6 << 16}); s != DOCAStatusOK {
		t.Fatalf("SetParams beta 2, scale 6 on port 1: %d", s)
	}
	if got := r.ParamsOf(1, DOCASlot); got != [DOCAParams]uint32{want[0], 2 << 16, 6 << 16} || r.ParamsOf(0, DOCASlot) != want {
		t.Errorf("port 1: %v; port 0: %v", r.ParamsOf(1, DOCASlot), r.ParamsOf(0, DOCASlot))
	}
}

func TestDOCAAlgo(t *testing.T) {
	t.Parallel()
	r := DOCARuntime{Compiled: DefaultParams()}
	r.Init()
	policy := func(x [4]int32, _ []uint32) int32 { return -1 << 16 } // always the largest decrease
	var ctx FlowCtx
	rate, req := r.Algo(DOCAEvent{Type: DOCAEvTX, Port: 2}, DOCASlot, &ctx, 0, OutY, policy)
	if rate != LineRate || req != 1 || ctx[CtxFlags]&FlagInit == 0 {
		t.Fatalf("a new flow's TX event: rate %d, rtt_req %d, ctx %v", rate, req, ctx)
	}
	if _, req = r.Algo(DOCAEvent{Type: DOCAEvTX, Port: 2}, DOCASlot, &ctx, 0, OutY, policy); req != 0 {
		t.Errorf("a known flow's TX event asks for a probe")
	}
	if _, req = r.Algo(DOCAEvent{Type: DOCAEvNACK, Port: 2}, DOCASlot, &ctx, 0, OutY, policy); req != 1 {
		t.Errorf("a NACK does not ask for a probe")
	}
	ev := DOCAEvent{Type: DOCAEvRTT, Port: 2, Timestamp: 5000, ReqSend: 1<<32 - 5000} // RTT 10 µs across the wrap
	for range 40 {
		rate, req = r.Algo(ev, DOCASlot, &ctx, 0, OutY, policy)
	}
	if rate != r.Compiled.MinRate || req != 1 || ctx[CtxBaseRTT] != 10_000 {
		t.Errorf("after 40 decreases: rate %d (min %d), rtt_req %d, base RTT %d", rate, r.Compiled.MinRate, req, ctx[CtxBaseRTT])
	}
	if c := r.CountersOf(2, DOCASlot); c[DOCACounterDecisions] != 40 || c[DOCACounterClamps] == 0 || c[DOCACounterClamps] >= 40 {
		t.Errorf("counters %v", c)
	}
	before := ctx
	if rate, req = r.Algo(ev, 3, &ctx, 0, OutY, policy); rate != LineRate || req != 0 || ctx != before {
		t.Errorf("another slot's event: rate %d, rtt_req %d, context changed %v", rate, req, ctx != before)
	}
}

func TestDOCAEntriesC(t *testing.T) {
	t.Parallel()
	c := DOCAEntriesC(DefaultParams(), "pol", 3, OutM)
	for _, want := range []string{"RLCC_DOCA_ENTRY void doca_pcc_dev_user_algo(", "(rlcc_policy_fn)0, pol, 3, RLCC_OUT_M",
		"rlcc_doca_init(disable_event_bitmask, &nicc_params)", "rlcc_doca_set_params(port_num, algo_slot, param_id_base"} {
		if !strings.Contains(c, want) {
			t.Errorf("DOCAEntriesC lacks %q:\n%s", want, c)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("DOCAEntriesC with 7 words did not panic")
		}
	}()
	DOCAEntriesC(DefaultParams(), "pol", 7, OutY)
}

func TestDOCATableRow(t *testing.T) {
	t.Parallel()
	if DOCATableRow(0, 1) != 16 || DOCATableRow(1, 0) != 128 || DOCATableRow(5, 9) != DOCATableRow(1, 1) {
		t.Errorf("rows: %d %d %d", DOCATableRow(0, 1), DOCATableRow(1, 0), DOCATableRow(5, 9))
	}
	got := DOCAEvent{Type: 6, Subtype: 1, Port: 2, Flags: 3, FlowTag: 4}.Bytes()
	if len(got) != DOCAEventBytes || got[0] != 6 || got[1] != 1 || got[2] != 2 || got[3] != 3 || got[4] != 4 {
		t.Errorf("event bytes %v", got)
	}
}
