package nicsdk

import (
	"fmt"
	"math"
	"math/bits"
)

// The RL-CC runtime (rlcc.h), mirrored in Go bit for bit. Each function here computes exactly
// what its C namesake computes, for every input; the tests prove it against the host build
// and the RISC-V build of rlcc.h. These Go functions are the specification: the C may compute
// the same values differently (tables, fewer divisions), never different values.
//
// Formats: rates are fxp20 (LineRate = 1.0), everything else Q16 (Q16One = 1.0). Rounding is
// floor everywhere.

// Flow context words used by RL-CC (RLCC_CTX_*): words 0..5 (24 bytes); words 6..11 are left
// untouched, except the first words of them a stateful policy keeps (OnEventEx).
const (
	CtxRate    = 0 // uint32 fxp20: the current rate, in [MinRate, LineRate]
	CtxBaseRTT = 1 // uint32 ns: the configured base RTT or the smallest nonzero RTT seen; 0 = none yet
	CtxA1      = 2 // uint32 Q16: a_{t-1}, the last multiplier
	CtxA2      = 3 // uint32 Q16: a_{t-2}
	CtxO1      = 4 // int32 Q16 (two's complement): o_{t-1}, the last observation
	CtxFlags   = 5 // bit 0 FlagInit: initialised; other bits reserved and kept
	RLCCWords  = 6 // RLCC_CTX_WORDS: words RL-CC uses
	RLCCBytes  = 4 * RLCCWords
	FlagInit   = 1 // RLCC_FLAG_INIT

	// StateWordsMax is RLCC_STATE_WORDS_MAX: the most context words a stateful policy keeps,
	// words RLCCWords..RLCCWords+words-1 (OnEventEx, RLCC_DEFINE_HANDLER_EX).
	StateWordsMax = CtxWords - RLCCWords
)

// PolicyOut is what a policy returns (RLCC_DEFINE_HANDLER_EX's OUT).
type PolicyOut int

const (
	OutY PolicyOut = iota // RLCC_OUT_Y: y in Q16, mapped to the multiplier by Multiplier
	OutM                  // RLCC_OUT_M: the multiplier m in Q16, clamped to [AMin, AMax]
)

// C is the C name of o: RLCC_OUT_Y or RLCC_OUT_M.
func (o PolicyOut) C() string {
	switch o {
	case OutY:
		return "RLCC_OUT_Y"
	case OutM:
		return "RLCC_OUT_M"
	}
	return fmt.Sprintf("PolicyOut(%d)", int(o))
}

func (o PolicyOut) String() string { return o.C() }

// The action -> multiplier map's constants (RLCC_*).
const (
	YMin = -Q16One // model output clamp, -1.0
	YMax = Q16One  // 1.0
	KQ16 = 13107   // 0.2 in Q16: floor(0.2 * 2^16)
	AMin = 54613   // floor(2^32 / (2^16 + KQ16)) = 0.83333: the smallest multiplier
	AMax = 78643   // 2^16 + KQ16 = 1.19999: the largest multiplier
	OMax = 128<<16 - 1
)

// Params is struct rlcc_params: the policy's parameters.
type Params struct {
	Target   uint32 // Q16, [0, 16.0]
	Beta     uint32 // Q16, [0, 256.0]
	Scale    uint32 // Q16, [2^-16, 256.0]
	MinRate  uint32 // fxp20, [1, InitRate]
	InitRate uint32 // fxp20, [MinRate, LineRate]: a new flow's rate
	// BaseRTT is the path's RTT in an empty system, in ns (the papers' base-RTT), at most
	// MaxBaseRTT; 0 learns it as the smallest RTT the flow sees.
	BaseRTT uint32
}

// MaxBaseRTT bounds Params.BaseRTT: one second.
const MaxBaseRTT = 1_000_000_000

// The default parameters as real numbers (rates as fractions of line rate): docs/ARCHITECTURE.md's, the
// NIC paper's target 0.064 and beta 1.5, the published network's scale 12, a minimum rate of
// 1/1000 of line rate, and new flows at line rate.
const (
	DefaultTarget   = 0.064
	DefaultBeta     = 1.5
	DefaultScale    = 12
	DefaultMinRate  = 0.001
	DefaultInitRate = 1
)

// DefaultParams are the defaults above in fixed point.
func DefaultParams() Params {
	p, err := NewParams(DefaultTarget, DefaultBeta, DefaultScale, DefaultMinRate, DefaultInitRate)
	if err != nil {
		panic(err)
	}
	return p
}

// NewParams converts real-valued parameters (rates as fractions of line rate) to their
// fixed-point form, each rounded to the nearest (ties away from zero), and validates them.
func NewParams(target, beta, scale, minRate, initRate float64) (Params, error) {
	var p Params
	for _, f := range []struct {
		name string
		v    float64
		one  float64
		dst  *uint32
	}{
		{"target", target, Q16One, &p.Target},
		{"beta", beta, Q16One, &p.Beta},
		{"scale", scale, Q16One, &p.Scale},
		{"min rate", minRate, LineRate, &p.MinRate},
		{"init rate", initRate, LineRate, &p.InitRate},
	} {
		r := math.Round(f.v * f.one)
		if !(r >= 0 && r <= math.MaxUint32) {
			return Params{}, fmt.Errorf("nicsdk: rl-cc %s %v is out of range", f.name, f.v)
		}
		*f.dst = uint32(r)
	}
	return p, p.Validate()
}

// Validate checks the ranges rlcc.h's arithmetic is exact in.
func (p Params) Validate() error {
	switch {
	case p.Target > 1<<20:
		return fmt.Errorf("nicsdk: rl-cc target %v is above 16", q16(int64(p.Target)))
	case p.Beta > 1<<24:
		return fmt.Errorf("nicsdk: rl-cc beta %v is above 256", q16(int64(p.Beta)))
	case p.Scale == 0 || p.Scale > 1<<24:
		return fmt.Errorf("nicsdk: rl-cc scale %v is not in (0, 256]", q16(int64(p.Scale)))
	case p.MinRate == 0 || p.MinRate > p.InitRate || p.InitRate > LineRate:
		return fmt.Errorf("nicsdk: rl-cc rates: want 0 < min rate (%d) <= init rate (%d) <= %d (fxp20)",
			p.MinRate, p.InitRate, LineRate)
	case p.BaseRTT > MaxBaseRTT:
		return fmt.Errorf("nicsdk: rl-cc base RTT %d ns is above %d (one second)", p.BaseRTT, MaxBaseRTT)
	}
	return nil
}

// C is a C definition of the parameters: static const struct rlcc_params name = {...}. A
// base RTT of 0 (learned) is left to the initializer's zero.
func (p Params) C(name string) string {
	base := ""
	if p.BaseRTT != 0 {
		base = fmt.Sprintf("\t.base_rtt_ns = %du,\n", p.BaseRTT)
	}
	return fmt.Sprintf("static const struct rlcc_params %s = {\n"+
		"\t.target = %du, /* %.6g */\n"+
		"\t.beta = %du, /* %.6g */\n"+
		"\t.scale = %du, /* %.6g */\n"+
		"\t.min_rate = %du, /* %.6g of line rate */\n"+
		"\t.init_rate = %du, /* %.6g of line rate */\n"+
		"%s};\n",
		name, p.Target, q16(int64(p.Target)), p.Beta, q16(int64(p.Beta)), p.Scale, q16(int64(p.Scale)),
		p.MinRate, float64(p.MinRate)/LineRate, p.InitRate, float64(p.InitRate)/LineRate, base)
}

// Names of the engine entry RLCC_DEFINE_HANDLER defines and of the model function it calls.
const (
	HandlerEntry = "nicc_on_event" // uint32_t nicc_on_event(const struct nicc_event *, struct nicc_flow_ctx *)
	PolicyEntry  = "nicc_policy"   // int32_t nicc_policy(const int32_t *x): y in Q16 from x[RLCCInputs]
	ParamsName   = "nicc_params"   // the const struct rlcc_params HandlerC defines
)

// HandlerC is the C that turns a policy into the engine entry: p as ParamsName, then
// RLCC_DEFINE_HANDLER over the C function policy, fed the window l (RLCC_DEFINE_HANDLER_L, with
// l's history and features as constants; the default layout prints RLCC_DEFINE_HANDLER, the
// same code). It goes after #include "rlcc.h" and after policy is declared or defined (a
// static inline, always_inline definition in the same file is inlined into the handler, so x
// stays in registers). It panics if l.Check(0) fails.
func HandlerC(p Params, l Layout, policy string) string {
	if l.IsDefault() {
		return p.C(ParamsName) + "\nRLCC_DEFINE_HANDLER(" + ParamsName + ", " + policy + ")\n"
	}
	return p.C(ParamsName) + handlerL(l, policy, OutY)
}

// HandlerMC is HandlerC for a stateless policy that returns the multiplier in Q16 (OnEventEx
// with no words and OutM): p as ParamsName, then RLCC_DEFINE_HANDLER_M (RLCC_DEFINE_HANDLER_L
// with RLCC_OUT_M for another layout than the default).
func HandlerMC(p Params, l Layout, policy string) string {
	if l.IsDefault() {
		return p.C(ParamsName) + "\nRLCC_DEFINE_HANDLER_M(" + ParamsName + ", " + policy + ")\n"
	}
	return p.C(ParamsName) + handlerL(l, policy, OutM)
}

func handlerL(l Layout, policy string, out PolicyOut) string {
	if err := l.Check(0); err != nil {
		panic(err.Error())
	}
	return fmt.Sprintf("\nRLCC_DEFINE_HANDLER_L(%s, %s, %s, %d, %s)\n", ParamsName, policy, out.C(), l.History, l.Features.C())
}

// HandlerExC is HandlerC for a stateful policy, int32_t policy(const int32_t *x, uint32_t
// *state), that keeps words context words (OnEventLayout) and returns what out says: p as
// ParamsName, then RLCC_DEFINE_HANDLER_EX (RLCC_DEFINE_HANDLER_EX_L for another layout than the
// default). It panics if words is outside [0, StateWordsMax], out is neither OutY nor OutM, or
// l.Check(words) fails.
func HandlerExC(p Params, l Layout, policy string, words int, out PolicyOut) string {
	checkEx(words, out)
	if l.IsDefault() {
		return p.C(ParamsName) + fmt.Sprintf("\nRLCC_DEFINE_HANDLER_EX(%s, %s, %d, %s)\n", ParamsName, policy, words, out.C())
	}
	if err := l.Check(words); err != nil {
		panic(err.Error())
	}
	return p.C(ParamsName) + fmt.Sprintf("\nRLCC_DEFINE_HANDLER_EX_L(%s, %s, %d, %s, %d, %s)\n",
		ParamsName, policy, words, out.C(), l.History, l.Features.C())
}

func checkEx(words int, out PolicyOut) {
	if words < 0 || words > StateWordsMax {
		panic(fmt.Sprintf("nicsdk: %d policy state words, want 0..%d", words, StateWordsMax))
	}
	if out != OutY && out != OutM {
		panic(fmt.Sprintf("nicsdk: policy output %d is neither OutY nor OutM", int(out)))
	}
}

func q16(v int64) float64 { return float64(v) / Q16One }

// RTTInflation is rlcc_rtt_infl: rtt/base in Q16, DivQ16(rtt, base), saturated to
// 0xffffffff when rtt >= base * 2^16 (65536.0); base 0 (no baseline yet) gives 1.0.
func RTTInflation(rttNs, baseNs uint32) uint32 {
	if baseNs == 0 {
		return Q16One
	}
	if rttNs>>16 >= baseNs {
		return math.MaxUint32
	}
	return DivQ16(rttNs, baseNs)
}

// divTab is rlcc_div_q16's table: floor(2^62 / (2^31 + j 2^23)) - 8321, j in [0, 256].
var divTab = func() (t [257]uint64) {
	for j := range t {
		t[j] = (1<<62)/(1<<31+uint64(j)<<23) - 8321
	}
	return t
}()

// DivQ16 is rlcc_div_q16: a * 2^16 / d in Q16 for d != 0 and a < d * 2^16, by a reciprocal
// of d read off a chord of divTab and one multiplication, no correction step: with q =
// floor(a * 2^16 / d), q - (q*8322 >> 30) - 2 <= DivQ16(a, d) <= q (7.8e-6 of q plus 2
// units of 2^-16 below the floor at most).
func DivQ16(a, d uint32) uint32 {
	s := uint(bits.LeadingZeros32(d))
	n, dn := uint64(a)<<16, uint64(d)<<s
	j := dn >> 23 & 0xff
	t0, t1 := divTab[j], divTab[j+1]
	r := t0 - (t0-t1)*(dn>>7&0xffff)>>16
	return uint32((n << s >> 31) * r >> 31)
}

// floorSqrt is floor(sqrt(x)) for x < 2^53.
func floorSqrt(x uint64) uint64 {
	s := uint64(math.Sqrt(float64(x))) // exact to within one
	for s*s > x {
		s--
	}
	for (s+1)*(s+1) <= x {
		s++
	}
	return s
}

// sqrtTab is rlcc_sqrt_fxp20's table: floor(sqrt(64 + i) * 2^20), i in [0, 192].
var sqrtTab = func() (t [193]uint64) {
	for i := range t {
		t[i] = floorSqrt(uint64(64+i) << 40)
	}
	return t
}()

// SqrtRate is rlcc_sqrt_rate: sqrt(rate) in Q16 for a rate in fxp20, sqrt(rate * 2^12) read
// off a chord of sqrtTab, with the rate first clamped to [1, LineRate]: floor(sqrt(rate *
// 2^12)) or one less (the chord lies less than 0.26 below the curve, the last shift may
// floor it one further); exact at line rate. The result is in [63, 65536].
func SqrtRate(rate uint32) uint32 {
	r := uint64(min(max(rate, 1), LineRate))
	top := r >> 20 // 1 at line rate
	x := (r - top) << 12
	k := uint(bits.LeadingZeros32(uint32(x))) &^ 1
	y := x << k
	i := y>>24 - 64
	t0, t1 := sqrtTab[i], sqrtTab[i+1]
	s := (t0 + (t1-t0)*(y>>8&0xffff)>>16) >> 8
	return uint32(s>>(k>>1) + top)
}

// ObsMin is rlcc_obs_min: the smallest observation, at zero excess inflation,
// -ceil(Target * Scale / 2^16) in Q16.
func ObsMin(p Params) int32 {
	ts := uint64(p.Target) * uint64(p.Scale)
	return -int32((ts + 0xffff) >> 16)
}

// Observation is rlcc_observation: o = (max(infl - beta, 0) * sqrtRate - target) * scale in
// Q16, clamped to [ObsMin(p), OMax]:
//
//	e    = infl - beta if infl > beta, else 0
//	prod = floor(e * min(sqrtRate, 2^16) / 2^16)             (first rounding)
//	o    = floor((prod*scale - target*scale) / 2^16), at most OMax  (second and last)
func Observation(infl, sqrtRate uint32, p Params) int32 {
	var e uint64
	if infl > p.Beta {
		e = uint64(infl - p.Beta)
	}
	prod := e * uint64(min(sqrtRate, Q16One)) >> 16
	big := prod * uint64(p.Scale)
	ts := uint64(p.Target) * uint64(p.Scale)
	if big >= ts {
		return int32(min((big-ts)>>16, OMax))
	}
	return -int32((ts - big + 0xffff) >> 16)
}

// Multiplier is rlcc_multiplier: the model output y (Q16, clamped to [-1, 1]) as a rate
// multiplier in Q16, in [AMin, AMax]:
//
//	y >= 0:  m = 2^16 + floor(KQ16 * y / 2^16)                  (1 + 0.2 y)
//	y <  0:  m = floor(2^32 / (2^16 + floor(KQ16 * -y / 2^16)))  (1 / (1 - 0.2 y))
func Multiplier(y int32) uint32 {
	y = min(max(y, YMin), YMax)
	if y >= 0 {
		return Q16One + uint32(y)*KQ16>>16
	}
	return uint32(uint64(1) << 32 / uint64(Q16One+uint32(-y)*KQ16>>16))
}

// UpdateRate is rlcc_update_rate: clamp(floor(rate * m / 2^16), MinRate, LineRate) in fxp20.
func UpdateRate(rate, m uint32, p Params) uint32 {
	r := min(uint64(rate)*uint64(m)>>16, LineRate)
	return max(uint32(r), p.MinRate)
}

// Init is rlcc_init: a new flow's words, rate = InitRate, base RTT = BaseRTT (0: none yet,
// learned), a_{t-1} = a_{t-2} = 1.0, o_{t-1} = ObsMin(p), the init flag set (other flag bits
// kept).
func Init(ctx *FlowCtx, p Params) {
	ctx[CtxRate] = p.InitRate
	ctx[CtxBaseRTT] = p.BaseRTT
	ctx[CtxA1] = Q16One
	ctx[CtxA2] = Q16One
	ctx[CtxO1] = uint32(ObsMin(p))
	ctx[CtxFlags] |= FlagInit
}

// OnEvent is rlcc_on_event, the whole RL-CC decision for one event with a stateless policy
// returning y: OnEventEx with no state words and OutY. Words RLCCWords..11 of ctx are never
// touched.
func OnEvent(ev Event, ctx *FlowCtx, p Params, policy func(x [4]int32) int32) uint32 {
	return OnEventEx(ev, ctx, p, 0, OutY, func(x [4]int32, _ []uint32) int32 { return policy(x) })
}

// OnEventEx is OnEventLayout with the default layout, x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}):
// rlcc_on_event_core (rlcc_on_event_ex, RLCC_DEFINE_HANDLER_EX).
func OnEventEx(ev Event, ctx *FlowCtx, p Params, words int, out PolicyOut,
	policy func(x [4]int32, state []uint32) int32) uint32 {
	var x Window // passed to the policy by value: no allocation
	s := stepIn(ev, ctx, p, DefaultLayout, words, out, &x)
	if !s.rtt {
		return s.rate
	}
	return s.out(ctx, p, out, policy([4]int32(x[:4]), s.state))
}

// InitLayout is Init and, for l, the history words above RL-CC's six (Layout.Word) set to what
// a flow that has only seen an idle link holds (HistoryInit); other words are left alone.
func InitLayout(ctx *FlowCtx, p Params, l Layout) {
	Init(ctx, p)
	initHistory(ctx, p, l)
}

func initHistory(ctx *FlowCtx, p Params, l Layout) {
	for f := range NumFeatures {
		for lag := range l.History {
			if w := l.Word(f, lag); w >= RLCCWords {
				ctx[w] = uint32(HistoryInit(f, p))
			}
		}
	}
}

// HistoryInit is a new flow's value of feature f in every past state of its window (rlcc.h's
// rlcc_hist_init): what a flow that has only seen an idle link would hold. The action 1.0 (no
// decision yet changed the rate), the observation ObsMin(p) (no excess inflation), the
// inflation 1.0 (RTT = base RTT) and the rate the flow starts at, InitRate >> 4.
func HistoryInit(f Feature, p Params) int32 {
	switch f {
	case FeatAction:
		return Q16One
	case FeatObs:
		return ObsMin(p)
	case FeatInfl:
		return Q16One
	}
	return int32(p.InitRate >> 4)
}

// InflMax is the inflation feature's upper clamp, OMax (128 - 2^-16 times the base RTT): an
// RTT 128 times the path's empty one is far past any queue a policy is trained on (the
// observation saturates at the same OMax sooner), it keeps the value an int32 Q16 the
// quantizer's grid spans, and the lower bound 0 is the inflation's own (an RTT of 0).
const InflMax = OMax

// FeatureRange is the declared range of feature f under p, raw Q16 [lo, hi]: the handler
// feeds every state's value clamped to it. Action [AMin, AMax]; observation [ObsMin(p), OMax];
// inflation [0, InflMax]; rate [MinRate >> 4, Q16One], the rate in force, a fraction of line
// rate floored to Q16 (rate >> 4 of an fxp20 rate in [MinRate, LineRate], so the bounds hold
// without a clamp; the low one is 0 for a MinRate below 16).
func FeatureRange(f Feature, p Params) (lo, hi int32) {
	switch f {
	case FeatAction:
		return AMin, AMax
	case FeatObs:
		return ObsMin(p), OMax
	case FeatInfl:
		return 0, InflMax
	}
	return int32(p.MinRate >> 4), Q16One
}

// clampFeature clamps a stored word of feature f to its declared range, as rlcc_hist_clamp:
// the action, the inflation and the rate as unsigned words, the observation as int32.
func clampFeature(f Feature, v uint32, p Params) int32 {
	lo, hi := FeatureRange(f, p)
	if f == FeatObs {
		return min(max(int32(v), lo), hi)
	}
	return int32(min(max(v, uint32(lo)), uint32(hi)))
}

// OnEventLayout is rlcc_on_event_core with a layout (rlcc_on_event_window,
// RLCC_DEFINE_HANDLER_EX_L), the whole RL-CC decision for one event with a policy that keeps
// words (0..StateWordsMax) context words, state = ctx[RLCCWords : RLCCWords+words], fed the
// window l, and returns y (OutY) or the multiplier (OutM):
//
//  1. A context without FlagInit is initialised (InitLayout), and its state words are zeroed,
//     whatever the event.
//  2. The stored rate is clamped to [MinRate, LineRate], and every stored value the window
//     reads to its feature's range (FeatureRange).
//  3. Not an RTT event: the clamped rate is stored and returned, nothing else changes (an
//     initialised flow's state and history words are untouched).
//  4. An RTT event: base = rtt if rtt != 0 and (base == 0 or rtt < base); infl =
//     RTTInflation(rtt, base); o_t = Observation(infl, SqrtRate(rate), p); the newest state
//     is (a_{t-1}, o_t, min(infl, InflMax), rate >> 4), the older ones are read from the
//     context (Layout.Word); x is the window, l.Slots() in order; v = policy(x, state), which
//     may rewrite state; m = Multiplier(v) (OutY) or v clamped to [AMin, AMax] (OutM); rate =
//     UpdateRate(rate, m, p); the history shifts: every kept value takes the one a lag newer
//     in this window (a_{t-2} = a_{t-1}, o_{t-1} = o_t, ...), a_{t-1} = m; the rate is stored
//     and returned. An RTT of 0 (no sample) leaves the base alone and has inflation 0 (1.0
//     while there is no base yet).
//
// The result is in [MinRate, LineRate]; words of ctx beyond RL-CC's, the policy's and the
// layout's are never touched. It panics if l.Check(words) fails or out is neither OutY nor
// OutM.
func OnEventLayout(ev Event, ctx *FlowCtx, p Params, l Layout, words int, out PolicyOut,
	policy func(x []int32, state []uint32) int32) uint32 {
	return OnEventWindow(new(Window), ev, ctx, p, l, words, out, policy)
}

// Window holds the inputs a decision feeds its policy, l.Slots() in order (at most CtxWords:
// Layout.Check). The policy is called through a function value, so the window it is given
// cannot live on the stack: a caller that decides often (a simulator) keeps one Window and
// hands it to OnEventWindow, one decision at a time.
type Window [CtxWords]int32

// OnEventWindow is OnEventLayout with the window in x, which it overwrites.
func OnEventWindow(x *Window, ev Event, ctx *FlowCtx, p Params, l Layout, words int, out PolicyOut,
	policy func(x []int32, state []uint32) int32) uint32 {
	s := stepIn(ev, ctx, p, l, words, out, x)
	if !s.rtt {
		return s.rate
	}
	return s.out(ctx, p, out, policy(x[:s.n:s.n], s.state))
}

// step is OnEventLayout's decision between the window and the policy's result.
type step struct {
	rtt   bool // an RTT event: the policy runs
	rate  uint32
	base  uint32
	o, a1 int32 // o_t and a_{t-1} clamped
	n     int   // the window's inputs
	state []uint32
}

// stepIn is OnEventLayout up to the policy (steps 1 to 4 before it): the window in x, the
// history shifted.
func stepIn(ev Event, ctx *FlowCtx, p Params, l Layout, words int, out PolicyOut, x *Window) step {
	checkEx(words, out)
	// The default layout passes Check for any words checkEx lets through.
	if !l.IsDefault() {
		if err := l.Check(words); err != nil {
			panic(err.Error())
		}
	}
	s := step{state: ctx[RLCCWords : RLCCWords+words : RLCCWords+words]}
	if ctx[CtxFlags]&FlagInit == 0 {
		InitLayout(ctx, p, l)
		clear(s.state)
	}
	s.rate = min(max(ctx[CtxRate], p.MinRate), LineRate)
	if ev.Type != EvRTT {
		ctx[CtxRate] = s.rate
		return s
	}
	s.rtt = true
	rtt, base := ev.RTTNs, ctx[CtxBaseRTT]
	if rtt != 0 && (base == 0 || rtt < base) {
		base = rtt
	}
	s.base = base
	infl := RTTInflation(rtt, base)
	s.o = Observation(infl, SqrtRate(s.rate), p)
	s.a1 = clampFeature(FeatAction, ctx[CtxA1], p)
	if l.IsDefault() {
		// The general loops below, unrolled: x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}); the
		// default layout keeps no word above RL-CC's, so nothing shifts.
		x[0], x[1] = s.a1, s.o
		x[2] = clampFeature(FeatAction, ctx[CtxA2], p)
		x[3] = clampFeature(FeatObs, ctx[CtxO1], p)
		s.n = RLCCInputs
		return s
	}
	now := [NumFeatures]int32{s.a1, s.o, int32(min(infl, InflMax)), int32(s.rate >> 4)}
	for lag := range l.History {
		for f := range NumFeatures {
			if !l.Features.Has(f) {
				continue
			}
			if lag == 0 {
				x[s.n] = now[f]
			} else {
				x[s.n] = clampFeature(f, ctx[l.Word(f, lag)], p)
			}
			s.n++
		}
	}
	// The history shifts: each value the context keeps at lag+1 takes this window's at lag.
	i := 0
	for lag := range l.History {
		for f := range NumFeatures {
			if !l.Features.Has(f) {
				continue
			}
			if w := l.Word(f, lag+1); w >= RLCCWords {
				ctx[w] = uint32(x[i])
			}
			i++
		}
	}
	return s
}

// out is OnEventLayout after the policy returned v: the multiplier, the rate update and the
// words 0..4 it stores.
func (s step) out(ctx *FlowCtx, p Params, out PolicyOut, v int32) uint32 {
	var m uint32
	if out == OutM {
		m = uint32(min(max(v, AMin), AMax))
	} else {
		m = Multiplier(v)
	}
	rate := UpdateRate(s.rate, m, p)
	ctx[CtxRate] = rate
	ctx[CtxBaseRTT] = s.base
	ctx[CtxA2] = uint32(s.a1)
	ctx[CtxA1] = m
	ctx[CtxO1] = uint32(s.o)
	return rate
}

// RLCCInputs is the number of model inputs of the RL-CC handler.
const RLCCInputs = 4

// InputRange is the declared range of one model input: every value the handler passes is a
// Q16 integer in [Min, Max], i.e. a real in [Lo, Hi] = [Min, Max] / 2^16.
type InputRange struct {
	Name     string
	Min, Max int32 // raw Q16
	Lo, Hi   float64
	FracBits int // 16
}

// RLCCInputRanges are the declared ranges of the window l under p, in the policy's order
// (l.Slots()), each named by Slot.Name: for the default layout x = (a_{t-1}, o_t, a_{t-2},
// o_{t-1}), "a_prev", "obs", "a_prev2", "obs_prev". The handler enforces them (it clamps what it
// reads from the context, FeatureRange), so they hold for any context; the quantizer proves
// thresholds and sums over them.
func RLCCInputRanges(p Params, l Layout) []InputRange {
	var rs []InputRange
	for _, s := range l.Slots() {
		lo, hi := FeatureRange(s.Feature, p)
		rs = append(rs, InputRange{Name: s.Name(), Min: lo, Max: hi, Lo: q16(int64(lo)), Hi: q16(int64(hi)), FracBits: 16})
	}
	return rs
}
