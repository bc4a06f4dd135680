package nicsdk

import (
	"fmt"
	"math"
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
// RLCC_DEFINE_HANDLER over the C function policy. It goes after #include "rlcc.h" and after
// policy is declared or defined (a static inline, always_inline definition in the same file
// is inlined into the handler, so x stays in registers).
func HandlerC(p Params, policy string) string {
	return p.C(ParamsName) + "\nRLCC_DEFINE_HANDLER(" + ParamsName + ", " + policy + ")\n"
}

// HandlerMC is HandlerC for a stateless policy that returns the multiplier in Q16 (OnEventEx
// with no words and OutM): p as ParamsName, then RLCC_DEFINE_HANDLER_M.
func HandlerMC(p Params, policy string) string {
	return p.C(ParamsName) + "\nRLCC_DEFINE_HANDLER_M(" + ParamsName + ", " + policy + ")\n"
}

// HandlerExC is HandlerC for a stateful policy, int32_t policy(const int32_t *x, uint32_t
// *state), that keeps words context words (OnEventEx) and returns what out says: p as
// ParamsName, then RLCC_DEFINE_HANDLER_EX. It panics if words is outside [0, StateWordsMax]
// or out is neither OutY nor OutM.
func HandlerExC(p Params, policy string, words int, out PolicyOut) string {
	checkEx(words, out)
	return p.C(ParamsName) + fmt.Sprintf("\nRLCC_DEFINE_HANDLER_EX(%s, %s, %d, %s)\n", ParamsName, policy, words, out.C())
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

// RTTInflation is rlcc_rtt_infl: rtt/base in Q16, floor(rtt * 2^16 / base) saturated to
// 0xffffffff; base 0 (no baseline yet) gives 1.0.
func RTTInflation(rttNs, baseNs uint32) uint32 {
	if baseNs == 0 {
		return Q16One
	}
	return FxpDiv16(rttNs, baseNs)
}

// SqrtRate is rlcc_sqrt_rate: sqrt(rate) in Q16 for a rate in fxp20, floor(sqrt(rate *
// 2^12)), exact, with the rate first clamped to [1, LineRate]. The result is in [64, 65536].
func SqrtRate(rate uint32) uint32 {
	r := uint64(min(max(rate, 1), LineRate)) << 12
	s := uint64(math.Sqrt(float64(r))) // r < 2^53: exact to within one
	for s*s > r {
		s--
	}
	for (s+1)*(s+1) <= r {
		s++
	}
	return uint32(s)
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

// OnEventEx is rlcc_on_event_core (rlcc_on_event_ex, RLCC_DEFINE_HANDLER_EX), the whole RL-CC
// decision for one event with a policy that keeps words (0..StateWordsMax) context words,
// state = ctx[RLCCWords : RLCCWords+words], and returns y (OutY) or the multiplier (OutM):
//
//  1. A context without FlagInit is initialised (Init), and its state words are zeroed,
//     whatever the event.
//  2. The stored rate is clamped to [MinRate, LineRate], a_{t-1} and a_{t-2} to [AMin, AMax],
//     o_{t-1} to [ObsMin(p), OMax].
//  3. Not an RTT event: the clamped rate is stored and returned, nothing else changes (an
//     initialised flow's state words are untouched).
//  4. An RTT event: base = rtt if rtt != 0 and (base == 0 or rtt < base); o_t =
//     Observation(RTTInflation(rtt, base), SqrtRate(rate), p); v = policy(x, state) with
//     x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), which may rewrite state; m = Multiplier(v) (OutY)
//     or v clamped to [AMin, AMax] (OutM); rate = UpdateRate(rate, m, p); the history shifts
//     (a_{t-2} = a_{t-1}, a_{t-1} = m, o_{t-1} = o_t); the rate is stored and returned. An
//     RTT of 0 (no sample) leaves the base alone and has inflation 0 (1.0 while there is no
//     base yet).
//
// The result is in [MinRate, LineRate]; words RLCCWords+words..11 of ctx are never touched
// (state's capacity ends at its length). It panics if words is outside [0, StateWordsMax] or
// out is neither OutY nor OutM.
func OnEventEx(ev Event, ctx *FlowCtx, p Params, words int, out PolicyOut,
	policy func(x [4]int32, state []uint32) int32) uint32 {
	checkEx(words, out)
	state := ctx[RLCCWords : RLCCWords+words : RLCCWords+words]
	if ctx[CtxFlags]&FlagInit == 0 {
		Init(ctx, p)
		clear(state)
	}
	rate := min(max(ctx[CtxRate], p.MinRate), LineRate)
	if ev.Type != EvRTT {
		ctx[CtxRate] = rate
		return rate
	}
	rtt, base := ev.RTTNs, ctx[CtxBaseRTT]
	if rtt != 0 && (base == 0 || rtt < base) {
		base = rtt
	}
	o := Observation(RTTInflation(rtt, base), SqrtRate(rate), p)
	x := [4]int32{
		int32(min(max(ctx[CtxA1], AMin), AMax)),
		o,
		int32(min(max(ctx[CtxA2], AMin), AMax)),
		min(max(int32(ctx[CtxO1]), ObsMin(p)), OMax),
	}
	v := policy(x, state)
	var m uint32
	if out == OutM {
		m = uint32(min(max(v, AMin), AMax))
	} else {
		m = Multiplier(v)
	}
	rate = UpdateRate(rate, m, p)
	ctx[CtxRate] = rate
	ctx[CtxBaseRTT] = base
	ctx[CtxA2] = uint32(x[0])
	ctx[CtxA1] = m
	ctx[CtxO1] = uint32(o)
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

// RLCCInputRanges are the declared ranges of x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}) under p. The
// handler enforces them (it clamps what it reads from the context), so they hold for any
// context; the quantizer proves thresholds and sums over them.
func RLCCInputRanges(p Params) [RLCCInputs]InputRange {
	r := func(name string, lo, hi int32) InputRange {
		return InputRange{Name: name, Min: lo, Max: hi, Lo: q16(int64(lo)), Hi: q16(int64(hi)), FracBits: 16}
	}
	return [RLCCInputs]InputRange{
		r("a_prev", AMin, AMax),
		r("obs", ObsMin(p), OMax),
		r("a_prev2", AMin, AMax),
		r("obs_prev", ObsMin(p), OMax),
	}
}
