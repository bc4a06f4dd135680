package nicsdk

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// The stateful, multiplier-returning form of the handler (rlcc_on_event_ex,
// RLCC_DEFINE_HANDLER_EX) against its Go twin OnEventEx, with testdata/testpolicy.h's
// test_policy_state (statePolicy here): on the host under the sanitizer, in fwsim through
// t_event_ex (words and output kind at run time), and through the handler macro itself
// (words and output kind folded as constants), on random event sequences of every event type,
// fresh flows, and contexts with garbage in and around the state words.

// exConfigs are the handler_ex.c builds harness_test.go writes (hxName).
var exConfigs = []struct {
	words int
	out   PolicyOut
}{{0, OutY}, {0, OutM}, {1, OutY}, {1, OutM}, {3, OutM}, {4, OutM}, {5, OutY}, {6, OutY}, {6, OutM}}

func hxName(words int, out PolicyOut) string {
	return fmt.Sprintf("hx_%d_%s", words, strings.ToLower(strings.TrimPrefix(out.C(), "RLCC_OUT_")))
}

// statePolicy is testpolicy.h's test_policy_state with coefficients c.
func statePolicy(c [5]int32, words int, out PolicyOut) func(x [4]int32, state []uint32) int32 {
	return func(x [4]int32, state []uint32) int32 {
		if len(state) != words {
			panic(fmt.Sprintf("statePolicy: %d state words, want %d", len(state), words))
		}
		var s int64
		for i := range x {
			s += int64(c[i]) * int64(x[i])
		}
		v := int64(c[4]) + s/65536
		if words > 0 {
			state[0] += uint32(x[1])
		}
		for i := words - 1; i >= 2; i-- {
			state[i] = state[i]<<8 | state[i-1]>>24
		}
		if words > 1 {
			state[1] = state[1]<<8 | uint32(x[1])>>6&0xff
		}
		var h uint32
		for i := range words {
			h = h*0x9e3779b1 + state[i]
		}
		h ^= h >> 15
		h *= 0x2c1b3c6d
		h ^= h >> 12
		if words > 0 {
			if h%64 == 0 {
				return int32(h)
			}
			v += int64(int32(h)) / (1 << (10 + h%8))
		}
		if out == OutM {
			v += Q16One
		}
		return int32(min(max(v, math.MinInt32), math.MaxInt32))
	}
}

// exFlow is a random flow for a stateful policy keeping words words and returning out.
type exFlow struct {
	flow
	words int
	out   PolicyOut
}

func randFlowEx(r *rand.Rand, n int) exFlow {
	f := exFlow{flow: randFlow(r, n), words: r.IntN(StateWordsMax + 1), out: PolicyOut(r.IntN(2))}
	if r.IntN(3) == 0 { // small coefficients: multipliers inside [AMin, AMax] too
		for i := range f.coef {
			f.coef[i] >>= 6 + r.IntN(8)
		}
	}
	for i := RLCCWords; i < CtxWords; i++ { // garbage in and beyond the state words
		f.ctx0[i] = any32(r)
	}
	switch r.IntN(4) {
	case 0: // garbage everywhere, initialised: the policy starts from whatever state is there
		for i := range RLCCWords {
			f.ctx0[i] = any32(r)
		}
		f.ctx0[CtxFlags] |= FlagInit
	case 1: // garbage everywhere, not initialised
		for i := range RLCCWords {
			f.ctx0[i] = any32(r)
		}
		f.ctx0[CtxFlags] &^= FlagInit
	}
	return f
}

// refresh makes ctx a fresh flow's again, now and then, with garbage state: the flow
// context recycled.
func refresh(r *rand.Rand, ctx *FlowCtx) bool {
	if r.IntN(150) != 0 {
		return false
	}
	ctx[CtxFlags] = any32(r) &^ FlagInit
	for i := RLCCWords; i < CtxWords; i++ {
		ctx[i] = any32(r)
	}
	return true
}

// exStats counts the policy's results against the range the handler maps or clamps them to.
type exStats struct{ below, in, above [2]int }

func (s *exStats) add(v int32, out PolicyOut) {
	lo, hi := int32(YMin), int32(YMax)
	if out == OutM {
		lo, hi = AMin, AMax
	}
	switch {
	case v < lo:
		s.below[out]++
	case v > hi:
		s.above[out]++
	default:
		s.in[out]++
	}
}

// stepEx is OnEventEx checked against the state contract: a fresh flow's policy sees zeroed
// state words, an initialised one's the stored ones; only RTT events call the policy; words
// beyond the policy's are untouched, and so is the state on other events of an initialised
// flow; the stored a_{t-1} is the multiplier.
func stepEx(t *testing.T, ev Event, ctx *FlowCtx, f exFlow, st *exStats) uint32 {
	t.Helper()
	before := *ctx
	fresh := before[CtxFlags]&FlagInit == 0
	pol := statePolicy(f.coef, f.words, f.out)
	called := false
	var v int32
	rate := OnEventEx(ev, ctx, f.p, f.words, f.out, func(x [4]int32, state []uint32) int32 {
		called = true
		for i, s := range state {
			if want := before[RLCCWords+i]; fresh && s != 0 || !fresh && s != want {
				t.Fatalf("fresh %v: the policy sees state word %d = %#x (stored %#x)", fresh, i, s, want)
			}
		}
		v = pol(x, state)
		st.add(v, f.out)
		return v
	})
	if called != (ev.Type == EvRTT) {
		t.Fatalf("event %+v: policy called %v", ev, called)
	}
	for i := RLCCWords + f.words; i < CtxWords; i++ {
		if ctx[i] != before[i] {
			t.Fatalf("word %d beyond the %d state words changed: %#x -> %#x", i, f.words, before[i], ctx[i])
		}
	}
	if !called {
		for i := RLCCWords; i < RLCCWords+f.words; i++ {
			if want := map[bool]uint32{true: 0, false: before[i]}[fresh]; ctx[i] != want {
				t.Fatalf("event %+v (fresh %v): state word %d = %#x, want %#x", ev, fresh, i, ctx[i], want)
			}
		}
	} else if f.out == OutM && ctx[CtxA1] != uint32(min(max(v, AMin), AMax)) {
		t.Fatalf("OutM: stored multiplier %d for policy result %d", ctx[CtxA1], v)
	}
	return rate
}

func TestOnEventExHost(t *testing.T) {
	t.Parallel()
	// As TestOnEventHost: each record is one step from the Go twin's context before it.
	r := rng(12)
	const recWords = 6 + 5 + 2 + CtxWords + EventBytes/4 // params, coef, words and out, ctx, event
	in := make([]uint32, 0, (hostRandom/2+400)*recWords)
	want := make([]uint32, 0, (hostRandom/2+400)*(1+CtxWords))
	var flows []exFlow
	var at []recordAt
	var st exStats
	perWords := [StateWordsMax + 1]int{}
	events := 0
	for events < hostRandom/2 {
		f := randFlowEx(r, 1+r.IntN(400))
		flows = append(flows, f)
		ctx := f.ctx0
		for k, ev := range f.events {
			refresh(r, &ctx)
			in = append(in, paramsWords(f.p)...)
			for _, c := range f.coef {
				in = append(in, uint32(c))
			}
			in = append(in, uint32(f.words), uint32(f.out))
			at = append(at, recordAt{len(flows) - 1, k, len(in)})
			in = append(append(in, ctx[:]...), eventWords(ev)...)
			rate := stepEx(t, ev, &ctx, f, &st)
			want = append(append(want, rate), ctx[:]...)
			events++
			perWords[f.words]++
		}
	}
	check(t, "host eventx", host(t, "eventx", in), want, 1+CtxWords, func(i int) string {
		f, k, ctx := flows[at[i].flow], at[i].event, at[i].ctx(in)
		return fmt.Sprintf("flow %+v coef %v words %d %v event %d %+v ctx %v",
			f.p, f.coef, f.words, f.out, k, f.events[k], ctx)
	})
	t.Logf("events per state word count %v; policy results below/in/above [-1, 1] (OutY) %d/%d/%d, [AMin, AMax] (OutM) %d/%d/%d",
		perWords, st.below[OutY], st.in[OutY], st.above[OutY], st.below[OutM], st.in[OutM], st.above[OutM])
	for _, o := range []PolicyOut{OutY, OutM} {
		if st.below[o] == 0 || st.in[o] == 0 || st.above[o] == 0 {
			t.Errorf("%v: policy results below/in/above the range %d/%d/%d: want each side exercised",
				o, st.below[o], st.in[o], st.above[o])
		}
	}
}

func TestOnEventExFwsim(t *testing.T) {
	t.Parallel()
	// Whole sequences through t_event_ex: the context lives in emulator memory.
	r := rng(13)
	sm := newSim(t)
	var st exStats
	events := 0
	for events < simRandom/2 {
		f := randFlowEx(r, 1+r.IntN(400))
		events += sm.runSeq(r, f.p, coefBytes(f.coef), f.ctx0, f.events, func(ea, cx, pa, ca uint64) uint32 {
			return sm.call("t_event_ex", ea, cx, pa, ca, uint64(f.words), uint64(f.out))
		}, func(ev Event, ctx *FlowCtx) uint32 { return stepEx(t, ev, ctx, f, &st) },
			fmt.Sprintf("flow %+v coef %v words %d %v", f.p, f.coef, f.words, f.out))
	}
	t.Logf("fwsim t_event_ex: %d events identical", events)
}

// runSeq runs events through a test entry of the fw firmware, call(event, ctx, params, coef
// addresses), with p and coef in emulator memory, from the context ctx0, the context recycled
// now and then (refresh), and fails at the first rate or context that differs from step's, the
// Go twin's (show names the flow); it returns the events run.
func (s *sim) runSeq(r *rand.Rand, p Params, coef []byte, ctx0 FlowCtx, events []Event,
	call func(ea, cx, pa, ca uint64) uint32, step func(ev Event, ctx *FlowCtx) uint32, show string) int {
	t := s.tb
	t.Helper()
	s.m.ResetAlloc()
	pa := s.alloc(paramsBytes(p), 4)
	ca := s.alloc(coef, 4)
	ctx := ctx0
	cx := s.alloc(ctx.Bytes(), 4)
	ea := s.alloc(make([]byte, EventBytes), EventAlign)
	for k, ev := range events {
		if refresh(r, &ctx) {
			if err := s.m.WriteBytes(cx, ctx.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.m.WriteBytes(ea, ev.Bytes()); err != nil {
			t.Fatal(err)
		}
		got := call(ea, cx, pa, ca)
		before := ctx
		want := step(ev, &ctx)
		gotCtx, _ := ParseFlowCtx(s.read(cx, CtxBytes))
		if got != want || gotCtx != ctx {
			t.Fatalf("%s event %d %+v from ctx %v:\nfwsim rate %d ctx %v\nGo    rate %d ctx %v",
				show, k, ev, before, got, gotCtx, want, ctx)
		}
	}
	return len(events)
}

// runHandler runs events through m's engine entry after set_policy(coef), from the context
// ctx0, the context recycled now and then (refresh), and fails at the first rate or context
// that differs from step's, the Go twin's (show names the flow); it returns the events run.
func runHandler(t *testing.T, m *fwsim.Machine, r *rand.Rand, coef []byte, ctx0 FlowCtx, events []Event,
	step func(ev Event, ctx *FlowCtx) uint32, show string) int {
	t.Helper()
	m.ResetAlloc()
	ca, _ := m.Alloc(uint64(len(coef)), 4)
	cx, _ := m.Alloc(CtxBytes, 4)
	ea, _ := m.Alloc(EventBytes, EventAlign)
	m.WriteBytes(ca, coef)
	if _, err := m.Call("set_policy", ca); err != nil {
		t.Fatal(err)
	}
	ctx := ctx0
	m.WriteBytes(cx, ctx.Bytes())
	for k, ev := range events {
		if refresh(r, &ctx) {
			m.WriteBytes(cx, ctx.Bytes())
		}
		m.WriteBytes(ea, ev.Bytes())
		res, err := m.Call(HandlerEntry, ea, cx)
		if err != nil {
			t.Fatal(err)
		}
		before := ctx
		want := step(ev, &ctx)
		gotCtx, _ := ParseFlowCtx(readBytes(m, cx, CtxBytes))
		if uint32(res.A0) != want || gotCtx != ctx {
			t.Fatalf("%s event %d %+v from ctx %v:\nfwsim rate %d ctx %v\nGo    rate %d ctx %v",
				show, k, ev, before, uint32(res.A0), gotCtx, want, ctx)
		}
	}
	return len(events)
}

func readBytes(m *fwsim.Machine, addr uint64, n int) []byte {
	b := make([]byte, n)
	m.ReadBytes(addr, b)
	return b
}

func coefBytes(c [5]int32) []byte {
	b := make([]byte, 0, 20)
	for _, v := range c {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func TestHandlerExFwsim(t *testing.T) {
	t.Parallel()
	// The engine entry RLCC_DEFINE_HANDLER_EX defines (HandlerExC's glue, the default
	// parameters), words and output kind folded as constants, in every configuration of
	// exConfigs.
	for ci, c := range exConfigs {
		t.Run(hxName(c.words, c.out), func(t *testing.T) {
			m, err := fwsim.NewMachine(firmware(t, hxName(c.words, c.out)), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rng(100 + uint64(ci))
			var st exStats
			events := 0
			for events < 10_000 {
				f := randFlowEx(r, 1+r.IntN(300))
				f.p, f.words, f.out = DefaultParams(), c.words, c.out
				events += runHandler(t, m, r, coefBytes(f.coef), f.ctx0, f.events, func(ev Event, ctx *FlowCtx) uint32 {
					return stepEx(t, ev, ctx, f, &st)
				}, fmt.Sprintf("coef %v", f.coef))
			}
			t.Logf("%d events identical", events)
		})
	}
}

func TestHandlerExC(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	got := HandlerExC(p, DefaultLayout, "pol", 3, OutM)
	if want := p.C(ParamsName) + "\nRLCC_DEFINE_HANDLER_EX(nicc_params, pol, 3, RLCC_OUT_M)\n"; got != want {
		t.Errorf("HandlerExC:\n%s\nwant\n%s", got, want)
	}
	if !strings.HasSuffix(HandlerExC(p, DefaultLayout, "pol", 0, OutY), "RLCC_DEFINE_HANDLER_EX(nicc_params, pol, 0, RLCC_OUT_Y)\n") {
		t.Error("HandlerExC(0, OutY)")
	}
	for _, bad := range []struct {
		words int
		out   PolicyOut
	}{{-1, OutY}, {StateWordsMax + 1, OutY}, {1, PolicyOut(2)}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HandlerExC(%d, %d) did not panic", bad.words, bad.out)
				}
			}()
			HandlerExC(p, DefaultLayout, "pol", bad.words, bad.out)
		}()
	}
	if StateWordsMax != 6 || CtxWords-RLCCWords != StateWordsMax {
		t.Errorf("StateWordsMax %d", StateWordsMax)
	}
}

func TestHandlerExRejectsBadConfig(t *testing.T) {
	t.Parallel()
	// RLCC_DEFINE_HANDLER_EX with words outside 0..6 or an unknown output kind does not
	// compile; the good ones do (also checked by the builds above).
	dir := mustDir(t)
	pol := "static int32_t pol(const int32_t *x, uint32_t *s) { (void)s; return x[0]; }\n"
	for _, c := range []struct {
		words, out string
		ok         bool
	}{{"0", "RLCC_OUT_Y", true}, {"6", "RLCC_OUT_M", true}, {"7", "RLCC_OUT_Y", false},
		{"-1", "RLCC_OUT_M", false}, {"2", "2", false}} {
		src := filepath.Join(dir, "hx_bad.c")
		body := "#include \"rlcc.h\"\n" + pol + p0C() + fmt.Sprintf("RLCC_DEFINE_HANDLER_EX(nicc_params, pol, %s, %s)\n", c.words, c.out)
		if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, strictC...), "-O2", "-I", dir, "-c", "-o", filepath.Join(dir, "hx_bad.o"), src)
		out, err := exec.Command("gcc", args...).CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("words %s out %s: compiled %v, want %v\n%s", c.words, c.out, err == nil, c.ok, out)
		}
	}
}

func p0C() string { return DefaultParams().C(ParamsName) }

func TestHandlerMC(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	if got, want := HandlerMC(p, DefaultLayout, "pol"), p.C(ParamsName)+"\nRLCC_DEFINE_HANDLER_M(nicc_params, pol)\n"; got != want {
		t.Errorf("HandlerMC:\n%s\nwant\n%s", got, want)
	}
}
