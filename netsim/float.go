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
	// Policy is y for the flow's window x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}); flow names the
	// flow for a policy with state of its own (a recurrent teacher).
	Policy func(flow uint32, x []float64) float64
}

// FloatRLCC's context words.
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
	return p.InitRate
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
	x := []float64{f32(frA1), o, f32(frA2), f32(frO1)}
	m := rlcc.HandlerMultiplier(c.Policy(ev.FlowID, x))
	minRate := float64(c.Params.MinRate) / nicsdk.LineRate
	rate = min(max(rate*m, minRate), 1)
	ctx[frRate] = math.Float32bits(float32(rate))
	ctx[frBase] = base
	ctx[frA2], ctx[frA1], ctx[frO1] = ctx[frA1], math.Float32bits(float32(m)), math.Float32bits(float32(o))
	return uint32(math.Round(rate * nicsdk.LineRate)), 0, nil
}
