package netsim

import (
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// FloatRLCC is the RL-CC handler in real numbers around a float policy (a teacher as
// trained): the observation (rlcc.Observation), the action map (rlcc.HandlerMultiplier) and
// the rate update in float64, the flow's history kept as float32 in its context words. It is
// what the papers simulate, and what a compiled policy is judged against.
type FloatRLCC struct {
	Label  string
	Params nicsdk.Params // target, beta, scale, rates: the same parameters as the firmware's
	// Layout is the window the policy is fed (the zero Layout is nicsdk.DefaultLayout), each
	// feature a real number, unclamped: the action, o, the inflation RTT/base and the rate
	// as a fraction of line rate, the newest state's rate the one in force when the RTT came.
	Layout nicsdk.Layout
	// Policy is y for the flow's window x (by default (a_{t-1}, o_t, a_{t-2}, o_{t-1})); flow
	// names the flow for a policy with state of its own (a recurrent teacher).
	Policy func(flow uint32, x []float64) float64
}

// FloatRLCC's context words: words 0..5 as the firmware's, in float32 where the firmware has
// Q16 or fxp20, and the layout's older states in the same top words as the firmware's
// (nicsdk.Layout.Word: data[11] down), float32 too; all twelve words at most.
const (
	frRate  = 0 // float32: the rate, a fraction of line rate
	frBase  = 1 // ns
	frA1    = 2 // float32: a_{t-1}
	frA2    = 3 // float32: a_{t-2}
	frO1    = 4 // float32: o_{t-1}
	frFlags = 5 // bit 0: initialised
)

func (c *FloatRLCC) Name() string   { return c.Label }
func (c *FloatRLCC) TimerNs() int64 { return 0 }

// check refuses a layout that does not fit the context.
func (c *FloatRLCC) check() error { return c.Layout.OrDefault().Check(0) }

func (c *FloatRLCC) Init(ctx *nicsdk.FlowCtx) uint32 {
	p := c.Params
	target, _, scale := rlcc.Real(p)
	rate := float64(p.InitRate) / nicsdk.LineRate
	*ctx = nicsdk.FlowCtx{}
	ctx[frRate] = math.Float32bits(float32(rate))
	ctx[frA1], ctx[frA2] = math.Float32bits(1), math.Float32bits(1)
	ctx[frO1] = math.Float32bits(float32(-target * scale))
	ctx[frFlags] = 1
	ctx[frBase] = p.BaseRTT
	// An idle link's past states, as the firmware's (nicsdk.HistoryInit) in real numbers.
	init := [nicsdk.NumFeatures]float64{1, -target * scale, 1, rate}
	l := c.Layout.OrDefault()
	for _, s := range l.Slots() {
		if w := l.Word(s.Feature, s.Lag); w >= nicsdk.RLCCWords {
			ctx[w] = math.Float32bits(float32(init[s.Feature]))
		}
	}
	return p.InitRate
}

// SetRate makes rate (fxp20) the flow's rate in force: an agent's simulator holds the rate.
func (c *FloatRLCC) SetRate(ctx *nicsdk.FlowCtx, rate uint32) {
	ctx[frRate] = math.Float32bits(float32(float64(rate) / nicsdk.LineRate))
}

func (c *FloatRLCC) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	f32 := func(w int) float64 { return float64(math.Float32frombits(ctx[w])) }
	rate := f32(frRate)
	fixed := uint32(math.Round(rate * nicsdk.LineRate))
	if ev.Type != nicsdk.EvRTT {
		return fixed, 0, nil
	}
	base := ctx[frBase]
	if ev.RTTNs != 0 && (base == 0 || ev.RTTNs < base) {
		base = ev.RTTNs
	}
	o := rlcc.Observation(ev.RTTNs, base, fixed, c.Params)
	l := c.Layout.OrDefault()
	var x []float64
	if l.IsDefault() {
		x = []float64{f32(frA1), o, f32(frA2), f32(frO1)}
	} else {
		infl := 1.0
		if base != 0 {
			infl = float64(ev.RTTNs) / float64(base)
		}
		now := [nicsdk.NumFeatures]float64{f32(frA1), o, infl, rate}
		slots := l.Slots()
		x = make([]float64, len(slots))
		for i, s := range slots {
			if s.Lag == 0 {
				x[i] = now[s.Feature]
			} else {
				x[i] = f32(l.Word(s.Feature, s.Lag))
			}
		}
		for i, s := range slots { // the older states shift one back, as the firmware's
			if w := l.Word(s.Feature, s.Lag+1); w >= nicsdk.RLCCWords {
				ctx[w] = math.Float32bits(float32(x[i]))
			}
		}
	}
	m := rlcc.HandlerMultiplier(c.Policy(ev.FlowID, x))
	minRate := float64(c.Params.MinRate) / nicsdk.LineRate
	rate = min(max(rate*m, minRate), 1)
	ctx[frRate] = math.Float32bits(float32(rate))
	ctx[frBase] = base
	ctx[frA2], ctx[frA1], ctx[frO1] = ctx[frA1], math.Float32bits(float32(m)), math.Float32bits(float32(o))
	return uint32(math.Round(rate * nicsdk.LineRate)), 0, nil
}
