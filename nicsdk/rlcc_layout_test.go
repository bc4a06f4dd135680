package nicsdk

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
)

// The handler fed any input layout (rlcc_on_event_window: rlcc_on_event_layout with the layout
// at run time, RLCC_DEFINE_HANDLER_L and RLCC_DEFINE_HANDLER_EX_L with it folded) against its
// Go twin OnEventLayout, with testdata/testpolicy.h's test_policy_layout (layoutPolicy here):
// on the host under the sanitizer, in fwsim, and through the handler macros, on random event
// sequences of every event type, fresh flows and contexts with garbage; plus the layout's
// context words, its refusals, its ranges and what the window holds.

const (
	fA  = FeatureMask(1 << FeatAction)
	fO  = FeatureMask(1 << FeatObs)
	fI  = FeatureMask(1 << FeatInfl)
	fR  = FeatureMask(1 << FeatRate)
	fAO = fA | fO
)

// layoutConfig is one handler_layout.c build: a layout, the policy's words and output kind,
// and the glue that defines the entry (HandlerC, HandlerMC or HandlerExC).
type layoutConfig struct {
	l     Layout
	words int
	out   PolicyOut
	ex    bool // HandlerExC (stateful); else HandlerC (OutY) or HandlerMC (OutM)
}

// layoutConfigs: history 1, 2, 3 and each features' largest, each feature alone and all four,
// stateless and stateful, with state words filling what the layout leaves.
var layoutConfigs = []layoutConfig{
	{Layout{1, fAO}, 0, OutY, false},
	{Layout{3, fAO}, 0, OutM, false},
	{Layout{5, fAO}, 0, OutY, true}, // action + obs at its largest: 6 top words
	{Layout{3, fAO}, 4, OutM, true},
	{Layout{2, fA}, 6, OutY, true},
	{Layout{8, fO}, 0, OutY, false}, // the longest window, 6 top words
	{Layout{2, fI}, 5, OutM, true},
	{Layout{7, fI}, 0, OutY, false},
	{Layout{2, fR}, 0, OutY, false},
	{Layout{4, fI | fR}, 0, OutM, true},
	{Layout{3, AllFeatures}, 0, OutY, false}, // all four at their largest: 6 top words
	{Layout{2, AllFeatures}, 4, OutM, true},
	{Layout{1, AllFeatures}, 6, OutY, true},
}

func (c layoutConfig) name() string {
	return fmt.Sprintf("hl_%d_%x_%d_%s", c.l.History, uint8(c.l.Features), c.words,
		strings.ToLower(strings.TrimPrefix(c.out.C(), "RLCC_OUT_")))
}

func (c layoutConfig) glue() string {
	switch {
	case c.ex:
		return HandlerExC(DefaultParams(), c.l, "test_policy_layout", c.words, c.out)
	case c.out == OutM:
		return HandlerMC(DefaultParams(), c.l, "test_policy_l")
	}
	return HandlerC(DefaultParams(), c.l, "test_policy_l")
}

func (c layoutConfig) glueCall() string {
	return fmt.Sprintf("stateful %v, layout {%d, %#x}, words %d, %v", c.ex, c.l.History, uint8(c.l.Features), c.words, c.out)
}

// layoutCoef is test_lcoef: a coefficient per input (up to 12) and the bias.
type layoutCoef [13]int32

// layoutPolicy is testpolicy.h's test_policy_layout with coefficients c.
func layoutPolicy(c layoutCoef, words int, out PolicyOut) func(x []int32, state []uint32) int32 {
	return func(x []int32, state []uint32) int32 {
		var s int64
		for i := range x {
			s += int64(c[i]) * int64(x[i])
		}
		v := min(max(int64(c[12])+s/65536, -1<<18), 1<<18)
		if words > 0 {
			state[0] += uint32(x[len(x)-1])
			for i := 1; i < words; i++ {
				state[i] += state[i-1] * 0x9e3779b1
			}
			v += int64(int32(state[words-1])) / 4096
		}
		if out == OutM {
			v += Q16One
		}
		return int32(v)
	}
}

func randLayoutCoef(r *rand.Rand) layoutCoef {
	var c layoutCoef
	shift := 0
	if r.IntN(3) == 0 { // the output hugs zero, like a trained policy
		shift = 4 + r.IntN(6)
	}
	for i := range c {
		c[i] = (int32(r.IntN(1<<19)) - 1<<18) >> shift
	}
	return c
}

// randLayout is a layout that fits and a number of state words that fits beside it.
func randLayout(r *rand.Rand) (Layout, int) {
	for {
		l := Layout{1 + r.IntN(HistoryMax), FeatureMask(1 + r.IntN(int(AllFeatures)))}
		if l.Check(0) == nil {
			return l, r.IntN(StateWordsMax - l.ExtraWords() + 1)
		}
	}
}

// layoutFlow is a random flow for a layout.
type layoutFlow struct {
	flow
	l     Layout
	lc    layoutCoef
	words int
	out   PolicyOut
}

func randLayoutFlow(r *rand.Rand, n int) layoutFlow {
	f := layoutFlow{flow: randFlow(r, n), lc: randLayoutCoef(r), out: PolicyOut(r.IntN(2))}
	f.l, f.words = randLayout(r)
	for i := RLCCWords; i < CtxWords; i++ { // garbage in the top and state words
		f.ctx0[i] = any32(r)
	}
	if r.IntN(4) == 0 {
		f.ctx0[CtxFlags] |= FlagInit
	}
	return f
}

func (f layoutFlow) in(ctx FlowCtx, ev Event) []uint32 {
	in := append(paramsWords(f.p), uint32(f.l.History), uint32(f.l.Features), uint32(f.words), uint32(f.out))
	for _, c := range f.lc {
		in = append(in, uint32(c))
	}
	return append(append(in, ctx[:]...), eventWords(ev)...)
}

// stepLayout is OnEventLayout checked against the words contract: words beyond RL-CC's, the
// policy's and the layout's are never touched; an initialised flow's other events touch no
// word but the rate.
func stepLayout(t *testing.T, ev Event, ctx *FlowCtx, f layoutFlow) uint32 {
	t.Helper()
	before := *ctx
	rate := OnEventLayout(ev, ctx, f.p, f.l, f.words, f.out, layoutPolicy(f.lc, f.words, f.out))
	for i := RLCCWords + f.words; i < CtxWords-f.l.ExtraWords(); i++ {
		if ctx[i] != before[i] {
			t.Fatalf("layout %v words %d: word %d changed: %#x -> %#x", f.l, f.words, i, before[i], ctx[i])
		}
	}
	if ev.Type != EvRTT && before[CtxFlags]&FlagInit != 0 {
		for i := CtxBaseRTT; i < CtxWords; i++ {
			if ctx[i] != before[i] {
				t.Fatalf("event %+v on an initialised flow changed word %d", ev, i)
			}
		}
	}
	return rate
}

func TestOnEventLayoutHost(t *testing.T) {
	t.Parallel()
	r := rng(40)
	var in, want []uint32
	var flows []layoutFlow
	var at []recordAt
	seen := map[Layout]bool{}
	events := 0
	for events < hostRandom/8 {
		f := randLayoutFlow(r, 1+r.IntN(300))
		flows = append(flows, f)
		seen[f.l] = true
		ctx := f.ctx0
		for k, ev := range f.events {
			refresh(r, &ctx)
			rec := f.in(ctx, ev) // ..., ctx, event
			at = append(at, recordAt{len(flows) - 1, k, len(in) + len(rec) - CtxWords - EventBytes/4})
			in = append(in, rec...)
			rate := stepLayout(t, ev, &ctx, f)
			want = append(append(want, rate), ctx[:]...)
			events++
		}
	}
	check(t, "host eventl", host(t, "eventl", in), want, 1+CtxWords, func(i int) string {
		f, k, ctx := flows[at[i].flow], at[i].event, at[i].ctx(in)
		return fmt.Sprintf("flow %+v layout %v words %d %v coef %v event %d %+v ctx %v",
			f.p, f.l, f.words, f.out, f.lc, k, f.events[k], ctx)
	})
	if len(seen) < 40 {
		t.Errorf("%d layouts drawn, want most of the valid ones", len(seen))
	}
	t.Logf("%d events over %d layouts", events, len(seen))
}

func TestOnEventLayoutFwsim(t *testing.T) {
	t.Parallel()
	// Whole sequences through t_event_layout (the layout a run-time value).
	r := rng(41)
	sm := newSim(t)
	events := 0
	for events < simRandom/4 {
		f := randLayoutFlow(r, 1+r.IntN(300))
		events += sm.runSeq(r, f.p, lcoefBytes(f.lc), f.ctx0, f.events, func(ea, cx, pa, ca uint64) uint32 {
			return sm.call("t_event_layout", ea, cx, pa, ca, uint64(f.words), uint64(f.out), uint64(f.l.History), uint64(f.l.Features))
		}, func(ev Event, ctx *FlowCtx) uint32 { return stepLayout(t, ev, ctx, f) },
			fmt.Sprintf("flow %+v layout %v words %d %v coef %v", f.p, f.l, f.words, f.out, f.lc))
	}
	t.Logf("fwsim t_event_layout: %d events identical", events)
}

func lcoefBytes(c layoutCoef) []byte {
	var b []byte
	for _, v := range c {
		b = append(b, coefBytes([5]int32{v})[:4]...)
	}
	return b
}

func TestHandlerLayoutFwsim(t *testing.T) {
	t.Parallel()
	// The engine entries RLCC_DEFINE_HANDLER_L and _EX_L define (the glue HandlerC, HandlerMC
	// and HandlerExC print for a layout, the default parameters), the layout folded: the same
	// bits as the Go twin.
	for ci, c := range layoutConfigs {
		t.Run(c.name(), func(t *testing.T) {
			m, err := fwsim.NewMachine(firmware(t, c.name()), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rng(200 + uint64(ci))
			events := 0
			for events < 5_000 {
				f := randLayoutFlow(r, 1+r.IntN(300))
				f.p, f.l, f.words, f.out = DefaultParams(), c.l, c.words, c.out
				events += runHandler(t, m, r, lcoefBytes(f.lc), f.ctx0, f.events, func(ev Event, ctx *FlowCtx) uint32 {
					return stepLayout(t, ev, ctx, f)
				}, fmt.Sprintf("coef %v", f.lc))
			}
			t.Logf("%v, %d words, %v: %d events identical", c.l, c.words, c.out, events)
		})
	}
}

// wcetLayouts are the handler_wcet.c builds (hw_H_F.c): the default layout and the largest
// of several feature sets.
var wcetLayouts = []Layout{DefaultLayout, {1, fAO}, {5, fAO}, {8, fO}, {7, fI}, {4, fI | fR}, {3, AllFeatures}}

func hwName(l Layout) string { return fmt.Sprintf("hw_%d_%x", l.History, uint8(l.Features)) }

func TestHandlerLayoutWCET(t *testing.T) {
	t.Parallel()
	// The handler skeleton (testdata/handler_wcet.c: a policy the handler calls, so every input
	// is stored) for each layout: no loops (the layout folds into straight-line code), measured
	// cycles within the WCET, and the WCET a layout costs over the default's.
	var def uint64
	for _, l := range wcetLayouts {
		r := rng(300)
		rep, maxc, _, _ := skeletonWCET(t, hwName(l), 40, func() (FlowCtx, []Event) {
			f := randFlow(r, 100)
			return f.ctx0, f.events
		})
		if l.IsDefault() {
			def = rep.Cycles
		} else if l.ExtraWords() > 0 && rep.Cycles <= def {
			t.Errorf("%v: WCET %d cycles, not above the default layout's %d: the history words' reads are not counted", l, rep.Cycles, def)
		}
		t.Logf("%-40v %2d inputs: WCET %d cycles (default %+d), max measured %d", l, l.Inputs(), rep.Cycles, int64(rep.Cycles)-int64(def), maxc)
	}
}

func TestLayoutWords(t *testing.T) {
	t.Parallel()
	// Every layout that fits takes ExtraWords distinct top words, data[11] down, and the
	// default layout none; the largest history of each feature set.
	fits := 0
	for h := 1; h <= HistoryMax+1; h++ {
		for m := FeatureMask(1); m <= AllFeatures; m++ {
			l := Layout{h, m}
			err := l.Check(0)
			if (err == nil) != (h <= HistoryMax && l.ExtraWords() <= StateWordsMax) {
				t.Fatalf("%v: Check %v with %d extra words", l, err, l.ExtraWords())
			}
			if err != nil {
				continue
			}
			fits++
			used := map[int]bool{}
			for _, s := range l.Slots() {
				w := l.Word(s.Feature, s.Lag)
				switch {
				case s.Lag == 0 && s.Feature == FeatAction && w != CtxA1,
					s.Lag == 0 && s.Feature != FeatAction && w != -1,
					s.Lag == 1 && s.Feature == FeatAction && w != CtxA2,
					s.Lag == 1 && s.Feature == FeatObs && w != CtxO1:
					t.Fatalf("%v: slot %+v in word %d", l, s, w)
				case w >= RLCCWords:
					if w < CtxWords-l.ExtraWords() || w >= CtxWords || used[w] {
						t.Fatalf("%v: slot %+v in word %d (extra words %d, used %v)", l, s, w, l.ExtraWords(), used)
					}
					used[w] = true
				}
			}
			if len(used) != l.ExtraWords() {
				t.Fatalf("%v: %d top words used, ExtraWords %d", l, len(used), l.ExtraWords())
			}
			if l.Inputs() > 12 {
				t.Fatalf("%v: %d inputs, over RLCC_INPUTS_MAX", l, l.Inputs())
			}
		}
	}
	if DefaultLayout.ExtraWords() != 0 || DefaultLayout.Check(StateWordsMax) != nil {
		t.Errorf("the default layout takes %d top words", DefaultLayout.ExtraWords())
	}
	for _, c := range []struct {
		m           FeatureMask
		words, want int
	}{{fAO, 0, 5}, {fO, 0, 8}, {fA, 0, 8}, {fI, 0, 7}, {fR, 0, 7}, {fI | fR, 0, 4}, {AllFeatures, 0, 3},
		{fAO, 2, 4}, {AllFeatures, 2, 2}, {AllFeatures, 6, 1}, {fI, 6, 1}, {fAO, 6, 2}} {
		if got := (Layout{1, c.m}).MaxHistory(c.words); got != c.want {
			t.Errorf("MaxHistory(%v, %d words) = %d, want %d", c.m.C(), c.words, got, c.want)
		}
	}
	t.Logf("%d layouts fit the context", fits)
}

func TestLayoutRefused(t *testing.T) {
	t.Parallel()
	// A layout that does not fit, alone or beside a stateful policy's words, is refused: by
	// Check (an error naming the words), by the glue (a panic), and by rlcc.h's macros (a
	// negative array size) in C.
	for _, c := range []struct {
		l     Layout
		words int
		want  string
	}{
		{Layout{6, fAO}, 0, "keeps 8 context words"},
		{Layout{5, fAO}, 1, "history 4 is the longest"},
		{Layout{3, AllFeatures}, 1, "keeps 6 context words of history and the policy 1"},
		{Layout{2, AllFeatures}, 5, "over the 6"},
		{Layout{9, fO}, 0, "want 1 to 8"},
		{Layout{0, fAO}, 0, "want 1 to 8"},
		{Layout{2, 0}, 0, "feature mask"},
		{Layout{2, 16}, 0, "feature mask"},
		{DefaultLayout, 7, "policy state words"},
	} {
		err := c.l.Check(c.words)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v with %d words: %v, want %q", c.l, c.words, err, c.want)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HandlerExC(%+v, %d words) did not panic", c.l, c.words)
				}
			}()
			HandlerExC(DefaultParams(), c.l, "pol", c.words, OutY)
		}()
	}
	dir := mustDir(t)
	pol := "static int32_t pol(const int32_t *x, uint32_t *s) { (void)s; return x[0]; }\n" +
		"static int32_t pol1(const int32_t *x) { return x[0]; }\n"
	for _, c := range []struct {
		macro string
		ok    bool
	}{
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 0, RLCC_OUT_Y, 5, RLCC_FEAT_ACTION | RLCC_FEAT_OBS)", true},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 1, RLCC_OUT_Y, 5, RLCC_FEAT_ACTION | RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 0, RLCC_OUT_M, 6, RLCC_FEAT_ACTION | RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 0, RLCC_OUT_Y, 3, RLCC_FEAT_ALL)", true},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 1, RLCC_OUT_Y, 3, RLCC_FEAT_ALL)", false},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 4, RLCC_OUT_Y, 2, RLCC_FEAT_ALL)", true},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 5, RLCC_OUT_Y, 2, RLCC_FEAT_ALL)", false},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, -1, RLCC_OUT_Y, 2, RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 0, 2, 2, RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_Y, 8, RLCC_FEAT_OBS)", true},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_Y, 9, RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_M, 0, RLCC_FEAT_OBS)", false},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_Y, 2, 0)", false},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_Y, 2, 16)", false},
		{"RLCC_DEFINE_HANDLER_L(nicc_params, pol1, RLCC_OUT_Y, 4, RLCC_FEAT_ALL)", false},
	} {
		src := filepath.Join(dir, "hl_bad.c")
		body := "#include \"rlcc.h\"\n" + pol + p0C() + c.macro + "\n"
		if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{}, strictC...), "-O2", "-Wno-unused-function", "-I", dir, "-c", "-o", filepath.Join(dir, "hl_bad.o"), src)
		out, err := exec.Command("gcc", args...).CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("%s: compiled %v, want %v\n%s", c.macro, err == nil, c.ok, out)
		}
	}
}

func TestHandlerLayoutGlue(t *testing.T) {
	t.Parallel()
	// The default layout prints today's glue (the same code); another its layout as constants.
	p := DefaultParams()
	if HandlerC(p, DefaultLayout, "pol") != p.C(ParamsName)+"\nRLCC_DEFINE_HANDLER(nicc_params, pol)\n" {
		t.Error("HandlerC of the default layout changed")
	}
	for _, c := range []struct{ got, want string }{
		{HandlerC(p, Layout{3, fAO}, "pol"), "RLCC_DEFINE_HANDLER_L(nicc_params, pol, RLCC_OUT_Y, 3, RLCC_FEAT_ACTION | RLCC_FEAT_OBS)"},
		{HandlerMC(p, Layout{2, AllFeatures}, "pol"), "RLCC_DEFINE_HANDLER_L(nicc_params, pol, RLCC_OUT_M, 2, RLCC_FEAT_ACTION | RLCC_FEAT_OBS | RLCC_FEAT_INFL | RLCC_FEAT_RATE)"},
		{HandlerExC(p, Layout{1, fR}, "pol", 6, OutY), "RLCC_DEFINE_HANDLER_EX_L(nicc_params, pol, 6, RLCC_OUT_Y, 1, RLCC_FEAT_RATE)"},
	} {
		if c.got != p.C(ParamsName)+"\n"+c.want+"\n" {
			t.Errorf("glue:\n%s\nwant the parameters and\n%s", c.got, c.want)
		}
	}
}

func TestLayoutWindowHistory(t *testing.T) {
	t.Parallel()
	// What the window holds, from a record kept beside the handler: the state at lag j is the
	// newest state of the RTT event j events back (a_{t-1}, o_t, the inflation and the rate
	// then), or an idle link's values (HistoryInit) before the flow's first RTT event; other
	// events do not shift it.
	r := rng(42)
	for _, l := range []Layout{{1, AllFeatures}, {3, AllFeatures}, {5, fAO}, {8, fO}, {7, fI}, {4, fI | fR}, {3, fA | fR}} {
		p := randParams(r)
		f := randFlow(r, 400)
		var ctx FlowCtx
		for i := range ctx {
			ctx[i] = any32(r) &^ FlagInit
		}
		var past [][NumFeatures]int32 // the newest state of each RTT event so far, oldest first
		for _, ev := range f.events {
			rateBefore := min(max(ctx[CtxRate], p.MinRate), LineRate)
			if ctx[CtxFlags]&FlagInit == 0 {
				rateBefore = p.InitRate
			}
			var newest [NumFeatures]int32
			OnEventLayout(ev, &ctx, p, l, 0, OutY, func(x []int32, _ []uint32) int32 {
				i := 0
				for lag := range l.History {
					for fe := range NumFeatures {
						if !l.Features.Has(fe) {
							continue
						}
						want := HistoryInit(fe, p)
						if lag == 0 {
							want = x[i] // checked below
						} else if k := len(past) - lag; k >= 0 {
							want = past[k][fe]
						}
						if x[i] != want {
							t.Fatalf("%v: %s at lag %d = %d, want %d (%d RTT events so far)", l, Slot{fe, lag}.Name(), lag, x[i], want, len(past))
						}
						if lag == 0 {
							newest[fe] = x[i]
						}
						i++
					}
				}
				return int32(r.IntN(2*Q16One+1)) - Q16One
			})
			if ev.Type != EvRTT {
				continue
			}
			// the newest state's rate and action, from the context before the event
			if l.Features.Has(FeatRate) && newest[FeatRate] != int32(rateBefore>>4) {
				t.Fatalf("%v: rate %d, want %d >> 4", l, newest[FeatRate], rateBefore)
			}
			// features outside the layout are not recorded: the window never shows them
			past = append(past, newest)
		}
	}
}

func TestLayoutInputsInDeclaredRanges(t *testing.T) {
	t.Parallel()
	r := rng(43)
	for range 1500 {
		f := randLayoutFlow(r, 200)
		ranges := RLCCInputRanges(f.p, f.l)
		if len(ranges) != f.l.Inputs() {
			t.Fatalf("%v: %d ranges", f.l, len(ranges))
		}
		ctx := f.ctx0
		pol := layoutPolicy(f.lc, f.words, f.out)
		for _, ev := range f.events {
			OnEventLayout(ev, &ctx, f.p, f.l, f.words, f.out, func(x []int32, st []uint32) int32 {
				for i, v := range x {
					if v < ranges[i].Min || v > ranges[i].Max {
						t.Fatalf("%v: input %s = %d outside its declared [%d, %d] (%+v)", f.l, ranges[i].Name, v, ranges[i].Min, ranges[i].Max, f.p)
					}
				}
				return pol(x, st)
			})
		}
	}
	got := []string{}
	for _, rg := range RLCCInputRanges(DefaultParams(), Layout{3, AllFeatures}) {
		got = append(got, fmt.Sprintf("%s[%d,%d]", rg.Name, rg.Min, rg.Max))
	}
	want := "a_prev[54613,78643] obs[-50328,8388607] infl[0,8388607] rate[65,65536] " +
		"a_prev2[54613,78643] obs_prev[-50328,8388607] infl_prev[0,8388607] rate_prev[65,65536] " +
		"a_prev3[54613,78643] obs_prev2[-50328,8388607] infl_prev2[0,8388607] rate_prev2[65,65536]"
	if strings.Join(got, " ") != want {
		t.Errorf("ranges of history 3, all four:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}
