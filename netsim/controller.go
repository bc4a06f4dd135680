package netsim

import (
	"github.com/nicc-dev/nicc/nicsdk"
)

// Controller is a CC algorithm as the NIC's engine runs it: one decision per CC event, with
// each flow's state in its 48-byte context (nicsdk.FlowCtx), as on the device. A controller
// may keep configuration and per-NIC engine state of its own (a DOCA program's parameter and
// counter tables), never per-flow state outside the context.
type Controller interface {
	// Name says what decides, for reports.
	Name() string
	// Init sets up a new flow's context and returns its first rate (fxp20 of line rate).
	Init(ctx *nicsdk.FlowCtx) uint32
	// Decide handles one CC event of the flow whose context is ctx: it may rewrite the
	// context and returns the flow's rate (fxp20 of line rate, clamped to (0, LineRate]),
	// and how long the decision took in ps (0: Config.LatencyNs). An error stops the run.
	Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (rate uint32, latencyPs int64, err error)
	// TimerNs is the period of each flow's timer events (nicsdk.EvTX, with the data bytes
	// sent since the last one), 0 for none.
	TimerNs() int64
}

// FixedRate sends every flow at one rate and ignores every event: the sanity tests' load.
type FixedRate struct {
	Rate uint32 // fxp20 of line rate
}

func (c FixedRate) Name() string                    { return "fixed rate" }
func (c FixedRate) Init(ctx *nicsdk.FlowCtx) uint32 { return c.Rate }
func (c FixedRate) TimerNs() int64                  { return 0 }
func (c FixedRate) Decide(_ nicsdk.Event, _ *nicsdk.FlowCtx) (uint32, int64, error) {
	return c.Rate, 0, nil
}

// RLCC is the RL-CC handler's runtime (nicsdk.OnEventLayout, the bit-exact Go twin of rlcc.h)
// around an integer policy: the golden model of a compiled policy, or any function of the Q16
// inputs. Its decisions take Config.LatencyNs unless Latency gives one.
type RLCC struct {
	Label  string
	Params nicsdk.Params
	// Layout is the window the policy is fed; the zero Layout is nicsdk.DefaultLayout. With
	// Words it must pass Layout.Check (NewRun refuses the run otherwise).
	Layout nicsdk.Layout
	Words  int              // context words the policy keeps (0..nicsdk.StateWordsMax)
	Out    nicsdk.PolicyOut // what the policy returns: y (OutY) or the multiplier (OutM)
	Policy func(x []int32, state []uint32) int32
	// Latency, if set, is the decision's latency in ps; it is called after the policy ran.
	Latency func() int64

	window *nicsdk.Window // a run's own (forNetwork): its decisions' inputs, one at a time
}

// forNetwork is c for one run: a copy with its own window, so runs that share c may run
// at once.
func (c *RLCC) forNetwork(Config) Controller {
	r := *c
	r.window = new(nicsdk.Window)
	return &r
}

func (c *RLCC) Name() string { return c.Label }

// check refuses a layout the handler cannot feed beside the policy's words.
func (c *RLCC) check() error { return c.Layout.OrDefault().Check(c.Words) }

func (c *RLCC) Init(ctx *nicsdk.FlowCtx) uint32 {
	clear(ctx[nicsdk.RLCCWords:])
	nicsdk.InitLayout(ctx, c.Params, c.Layout.OrDefault())
	return ctx[nicsdk.CtxRate]
}

func (c *RLCC) TimerNs() int64 { return 0 }

func (c *RLCC) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	w := c.window
	if w == nil { // c outside a run
		w = new(nicsdk.Window)
	}
	rate := nicsdk.OnEventWindow(w, ev, ctx, c.Params, c.Layout.OrDefault(), c.Words, c.Out, c.Policy)
	var lat int64
	if c.Latency != nil {
		lat = c.Latency()
	}
	return rate, lat, nil
}
