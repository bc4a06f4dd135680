package prove

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// handlerContexts is how many random contexts rate-in-range runs beside the corner ones.
const handlerContexts = 1 << 15

// rateInRange decides rate-in-range. The handler's last step clamps the new rate to [min
// rate, line rate] (nicsdk.UpdateRate) after the policy's multiplier, whatever the context
// held and whatever the event: with the compile's min rate at most line rate, every new rate
// is in range. The proof rests on the handler's semantics, which verify holds the firmware to
// bit-exactly; the firmware is then run on contexts built to break it (every rate word's
// edges, a context never initialised, all ones, the base RTT at 0 and at its top, RTTs at
// their edges, each event type) and on random ones, and each new rate is checked against the
// range and the golden handler.
func (d *domain) rateInRange() (*Result, error) {
	p := d.in.Params
	res := &Result{Domain: 0, Assumes: "the firmware computes the golden handler (nicsdk.OnEventLayout) bit-exactly, as verify checked; the compile's parameters"}
	if p.MinRate < 1 || p.MinRate > nicsdk.LineRate {
		res.Verdict, res.Method = Refuted, "the compile's min rate is outside [1, line rate]: the clamp cannot hold the rate in range"
		res.Counterexample = &Counterexample{Why: fmt.Sprintf("min rate %d (fxp20) against line rate %d", p.MinRate, nicsdk.LineRate)}
		return res, nil
	}
	l := d.in.Layout.OrDefault()
	words, out := d.in.Policy.StateWords(), d.out
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []uint32{0, 1, p.MinRate - 1, p.MinRate, p.MinRate + 1, nicsdk.LineRate / 2, nicsdk.LineRate - 1, nicsdk.LineRate, nicsdk.LineRate + 1, 1<<31 - 1, 1<<32 - 1}
	var cases []struct {
		ctx nicsdk.FlowCtx
		ev  nicsdk.Event
	}
	add := func(ctx nicsdk.FlowCtx, ev nicsdk.Event) {
		cases = append(cases, struct {
			ctx nicsdk.FlowCtx
			ev  nicsdk.Event
		}{ctx, ev})
	}
	events := []nicsdk.Event{{Type: nicsdk.EvCNP}, {Type: nicsdk.EvNACK}, {Type: nicsdk.EvTX, TxBytes: 4096}}
	for _, rtt := range []uint32{0, 1, p.BaseRTT, 2*p.BaseRTT + 1, 100 * p.BaseRTT, 1<<32 - 1} {
		events = append(events, nicsdk.Event{Type: nicsdk.EvRTT, RTTNs: rtt})
	}
	for _, r := range rates {
		for _, flags := range []uint32{0, nicsdk.FlagInit, 1<<32 - 1} {
			for _, base := range []uint32{0, 1, p.BaseRTT, 1<<32 - 1} {
				for _, fill := range []uint32{0, 1 << 31, 1<<32 - 1} {
					var ctx nicsdk.FlowCtx
					for w := range ctx {
						ctx[w] = fill
					}
					ctx[nicsdk.CtxRate], ctx[nicsdk.CtxFlags], ctx[nicsdk.CtxBaseRTT] = r, flags, base
					for _, ev := range events {
						add(ctx, ev)
					}
				}
			}
		}
	}
	for range handlerContexts {
		var ctx nicsdk.FlowCtx
		for w := range ctx {
			ctx[w] = rng.Uint32()
		}
		ctx[nicsdk.CtxRate] = rates[rng.IntN(len(rates))] ^ rng.Uint32()>>rng.IntN(33)
		add(ctx, nicsdk.Event{Type: nicsdk.EventType(rng.IntN(int(nicsdk.EventTypeEnd))), RTTNs: rng.Uint32() >> rng.IntN(32)})
	}
	for _, c := range cases {
		gctx := c.ctx
		want := nicsdk.OnEventLayout(c.ev, &gctx, p, l, words, out, d.in.Policy.Call)
		got, who := want, "golden handler"
		if d.in.Handler != nil {
			fctx := c.ctx
			var err error
			if got, err = d.in.Handler(c.ev, &fctx); err != nil {
				return nil, fmt.Errorf("the firmware's handler on context %v, event %+v: %w", c.ctx, c.ev, err)
			}
			who = "firmware"
			if got != want {
				return nil, fmt.Errorf("on context %v, event %+v the firmware's new rate is %d, the golden handler's %d: the compile is not what verify passed", c.ctx, c.ev, got, want)
			}
		}
		if got < p.MinRate || got > nicsdk.LineRate {
			ctx, ev := c.ctx, c.ev
			res.Verdict, res.Method = Refuted, "the "+who+" on a context built to break it"
			res.Counterexample = &Counterexample{Context: &ctx, Event: &ev, NewRate: got,
				Why: fmt.Sprintf("the new rate %d (fxp20) is outside [%d, %d]", got, p.MinRate, nicsdk.LineRate)}
			return res, nil
		}
	}
	ran := "the golden handler"
	if d.in.Handler != nil {
		ran = "the firmware in fwsim and the golden handler, equal on each,"
	}
	res.Verdict, res.ProvenShare = Proven, 1
	res.Method = fmt.Sprintf("from the handler's last step, a clamp to [min rate %d, line rate %d] (fxp20) whatever the context and event; %s run on %d contexts and events built to break it (%d random), every new rate in range",
		p.MinRate, nicsdk.LineRate, ran, len(cases), handlerContexts)
	return res, nil
}

// searchSamples bounds a search for counterexamples where no proof method applies.
const searchSamples = 1 << 20

// searchMonotone looks for two states, equal but for o one network step apart, whose
// multipliers rise with o: random states of the domain and every state's o at its range's
// ends (a recurrent policy's from a new flow's memory). It refutes or stays unknown.
func (d *domain) searchMonotone() (*Result, error) {
	if d.oIdx < 0 {
		return nil, fmt.Errorf("the policy's layout %s has no o_t", d.in.Layout.OrDefault())
	}
	b := d.whole()
	res := &Result{Assumes: boxAssumes + d.memoryAssumes(), Domain: b.states(), Verdict: Unknown}
	step := d.oStep()
	rng := rand.New(rand.NewPCG(3, 4))
	deadline := time.Now().Add(d.budget())
	n := 0
	for ; n < searchSamples && (n&1023 != 0 || time.Now().Before(deadline)); n++ {
		x := d.random(rng, b)
		if n%4 == 0 {
			x[d.oIdx] = b.lo[d.oIdx] + int32(rng.IntN(2))*(b.hi[d.oIdx]-b.lo[d.oIdx]-step)
		}
		x[d.oIdx] = min(x[d.oIdx], b.hi[d.oIdx]-step)
		up := append([]int32(nil), x...)
		up[d.oIdx] += step
		if d.golden(up, nil) > d.golden(x, nil) {
			ce, err := d.counterexample("with the other inputs fixed, the multiplier rises as o goes up one step", nil, x, up)
			if err != nil {
				return nil, err
			}
			res.Verdict, res.Counterexample = Refuted, ce
			res.Method = fmt.Sprintf("search: a counterexample at pair %d", n+1)
			return res, nil
		}
	}
	res.Method = fmt.Sprintf("not proven: no proof method for this policy's monotonicity; a search of %d pairs of states one o step apart found no counterexample", n)
	return res, nil
}

// searchSequences looks for a flow that breaks p (cuts-when-congested, raises-when-idle,
// bounded-step) under a recurrent policy, which no proof method here covers: random
// sequences of up to 64 decisions from a new flow's memory, each state drawn as hunt draws
// them (half of them in p's region), p checked at every decision in its region. A
// counterexample is the sequence up to the decision that breaks p, which nicc eval DIR
// --input replays as one flow. It refutes or stays unknown.
func (d *domain) searchSequences(p Property) (*Result, error) {
	c, err := d.checkOf(p)
	if err != nil {
		return nil, err
	}
	res := &Result{Assumes: boxAssumes + d.memoryAssumes(), Domain: c.region.states(), Verdict: Unknown}
	if c.empty {
		res.Verdict, res.ProvenShare, res.Domain, res.Method = Proven, 1, 0, "vacuous: no state of the domain is in the property's region"
		return res, nil
	}
	rng := rand.New(rand.NewPCG(5, 6))
	deadline := time.Now().Add(d.budget())
	whole := d.whole()
	steps, flows := 0, 0
	for steps < searchSamples && time.Now().Before(deadline) {
		flows++
		state := make([]uint32, d.in.Policy.StateWords())
		var xs [][]int32
		var m uint32
		for range 1 + rng.IntN(64) {
			from := whole
			if rng.IntN(2) == 0 {
				from = c.region
			}
			x := d.chain(xs, m, d.draw(rng, from, steps))
			xs = append(xs, x)
			steps++
			m = d.m(d.in.Policy.Call(x, state))
			if inRegion(x, c.region) && !c.ok(m) {
				ce, err := d.sequence(c.what, xs)
				if err != nil {
					return nil, err
				}
				res.Verdict, res.Counterexample = Refuted, ce
				res.Method = fmt.Sprintf("search: a counterexample at decision %d of flow %d (%d decisions tried)", len(xs), flows, steps)
				return res, nil
			}
		}
	}
	res.Method = fmt.Sprintf("a search of %d flows of up to 64 decisions from a new flow's memory (%d decisions) found no counterexample", flows, steps)
	return res, nil
}

// hunt looks for a state of c's region that breaks it: up to samples states drawn by draw.
// It returns the counterexample, if any, and how many states it tried.
func (d *domain) hunt(c check, samples int, deadline time.Time) (*Counterexample, int, error) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 0
	for n < samples && (n&1023 != 0 || time.Now().Before(deadline)) {
		n++
		x := d.draw(rng, c.region, n)
		if !c.ok(d.golden(x, nil)) {
			ce, err := d.counterexample(c.what, nil, x)
			return ce, n, err
		}
	}
	return nil, n, nil
}

// draw is the n-th state a search tries in b: every fourth at a corner, every other one
// with o log-uniform over its range (o's range is wide, and policies change most near the
// target), the rest uniform.
func (d *domain) draw(rng *rand.Rand, b box, n int) []int32 {
	x := d.random(rng, b)
	switch {
	case n%4 == 0:
		for i := range x {
			x[i] = []int32{b.lo[i], b.hi[i]}[rng.IntN(2)]
		}
	case n%2 == 0 && d.oIdx >= 0:
		lo, hi := float64(b.lo[d.oIdx]), float64(b.hi[d.oIdx])
		x[d.oIdx] = int32(min(lo+math.Expm1(rng.Float64()*math.Log1p(hi-lo)), hi))
	}
	return x
}

// chain makes drawn the next decision of the flow whose decisions so far are xs, the last
// returning m: its current state's inputs (o, and the inflation and rate a layout may add)
// are drawn's, its past ones what the flow's last decisions saw and chose (a_{t-1} is m,
// each older state the last decision's one lag newer); a new flow's first decision has the
// past a new flow's handler holds (nicsdk.HistoryInit).
func (d *domain) chain(xs [][]int32, m uint32, drawn []int32) []int32 {
	slots := d.in.Layout.OrDefault().Slots()
	at := map[nicsdk.Slot]int{}
	for i, s := range slots {
		at[s] = i
	}
	x := append([]int32(nil), drawn...)
	for i, s := range slots {
		var v int32
		switch {
		case s.Lag == 0 && s.Feature != nicsdk.FeatAction:
			continue
		case len(xs) == 0:
			v = nicsdk.HistoryInit(s.Feature, d.in.Params)
		case s.Feature == nicsdk.FeatAction && s.Lag == 0:
			v = int32(m)
		default:
			v = xs[len(xs)-1][at[nicsdk.Slot{Feature: s.Feature, Lag: s.Lag - 1}]]
		}
		x[i] = min(max(v, d.inputs[i].Min), d.inputs[i].Max)
	}
	return x
}

func inRegion(x []int32, b box) bool {
	for i := range x {
		if x[i] < b.lo[i] || x[i] > b.hi[i] {
			return false
		}
	}
	return true
}

// random is a uniform vector of b.
func (d *domain) random(rng *rand.Rand, b box) []int32 {
	x := make([]int32, len(b.lo))
	for i := range x {
		x[i] = int32(int64(b.lo[i]) + rng.Int64N(int64(b.hi[i])-int64(b.lo[i])+1))
	}
	return x
}

// memoryAssumes says what a recurrent policy's search assumes of its memory.
func (d *domain) memoryAssumes() string {
	if d.in.Policy.StateWords() == 0 {
		return ""
	}
	return fmt.Sprintf("; the recurrent policy's memory (%d state words) is what a flow's earlier decisions left it, from a new flow's zero memory", d.in.Policy.StateWords())
}

// oStep is one step of o as the policy's network sees it (its input shift), in raw units.
func (d *domain) oStep() int32 {
	switch ir := d.in.Policy.(type) {
	case *quantize.MLPIR:
		return int32(1) << ir.InShift[d.oIdx]
	case *quantize.LSTMIR:
		return int32(1) << ir.InShift[d.oIdx]
	}
	return 1
}
