package rlcc

import (
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/nicsdk"
)

// EventGen draws RL-CC event sequences for checking a handler: starting flow contexts of
// every kind, and events on them (mostly RTT samples whose observations span the sampler's
// range or land near given thresholds; CNP, NACK, TX and unknown types; RTTs of zero, below
// the base, and saturating). Draws depend only on Rng's state, so a seed gives the same
// sequences.
type EventGen struct {
	Rng    *rand.Rand
	Params nicsdk.Params
	// Layout is the window the handler feeds (the zero Layout is nicsdk.DefaultLayout): the
	// context words a starting context fills and the inputs Thresholds are for.
	Layout nicsdk.Layout
	// Thresholds are, per RL-CC input of the layout, raw values worth landing on (a tree's
	// split thresholds); nil or empty for an input without any.
	Thresholds [][]int32
	ts         uint64 // the last event's timestamp
}

func (g *EventGen) layout() nicsdk.Layout { return g.Layout.OrDefault() }

// input is the index of feature f at lag in the layout's inputs, or -1.
func (g *EventGen) input(f nicsdk.Feature, lag int) int {
	for i, s := range g.layout().Slots() {
		if s == (nicsdk.Slot{Feature: f, Lag: lag}) {
			return i
		}
	}
	return -1
}

// validWord is a value of feature f in its range, as a context word: the observation up to
// SampleOMax, the inflation up to 20 (an RTT 20 times the base).
func (g *EventGen) validWord(f nicsdk.Feature) uint32 {
	lo, hi := nicsdk.FeatureRange(f, g.Params)
	switch f {
	case nicsdk.FeatObs:
		hi = int32(math.Round(SampleOMax(g.Params) * float64(nicsdk.Q16One)))
	case nicsdk.FeatInfl:
		hi = 20 * nicsdk.Q16One
	}
	return uint32(randIn(g.Rng, lo, hi))
}

func randIn(rng *rand.Rand, lo, hi int32) int32 {
	if hi <= lo {
		return lo
	}
	return int32(int64(lo) + rng.Int64N(int64(hi)-int64(lo)+1))
}

// pickThr is a threshold of input f ±2 LSB, or false when f has none.
func (g *EventGen) pickThr(f int) (int64, bool) {
	if f < 0 || f >= len(g.Thresholds) {
		return 0, false
	}
	ts := g.Thresholds[f]
	if len(ts) == 0 {
		return 0, false
	}
	return int64(ts[g.Rng.IntN(len(ts))]) + g.Rng.Int64N(4) - 1, true
}

// StartCtx draws a sequence's starting flow context, and says which kind it is: "new flow"
// (zero words), "valid" (every word in range), "thresholds" (valid, with history at the
// thresholds), "garbage" (random words) or "extreme" (words at and beyond their limits).
// Words RLCCWords and up are random: RL-CC must leave them alone.
func (g *EventGen) StartCtx() (nicsdk.FlowCtx, string) {
	r, p, l := g.Rng, g.Params, g.layout()
	var ctx nicsdk.FlowCtx
	for i := nicsdk.RLCCWords; i < nicsdk.CtxWords; i++ {
		ctx[i] = r.Uint32() // words RL-CC must leave alone
	}
	valid := func() {
		ctx[nicsdk.CtxRate] = g.logRate()
		ctx[nicsdk.CtxBaseRTT] = 1000 + r.Uint32N(100_000)
		ctx[nicsdk.CtxA1] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxA2] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxO1] = uint32(randIn(r, nicsdk.ObsMin(p), int32(math.Round(SampleOMax(p)*float64(nicsdk.Q16One)))))
		ctx[nicsdk.CtxFlags] = nicsdk.FlagInit
		if r.IntN(4) == 0 {
			ctx[nicsdk.CtxFlags] |= r.Uint32() &^ 1
		}
		for _, s := range l.Slots() { // the layout's top words (none for the default)
			if w := l.Word(s.Feature, s.Lag); w >= nicsdk.RLCCWords {
				ctx[w] = g.validWord(s.Feature)
			}
		}
	}
	switch k := r.IntN(20); {
	case k < 5:
		for i := range nicsdk.RLCCWords {
			ctx[i] = 0
		}
		return ctx, "new flow"
	case k < 12:
		valid()
		return ctx, "valid"
	case k < 16:
		valid()
		for i, s := range l.Slots() { // every input the context holds (words 2..4 and the top)
			if w := l.Word(s.Feature, s.Lag); w >= 0 {
				if v, ok := g.pickThr(i); ok && r.IntN(4) != 0 {
					ctx[w] = uint32(int32(v))
				}
			}
		}
		return ctx, "thresholds"
	case k < 18:
		for i := range nicsdk.RLCCWords {
			ctx[i] = r.Uint32()
		}
		return ctx, "garbage"
	default:
		om := nicsdk.ObsMin(p)
		words := []uint32{0, 1, nicsdk.AMin - 1, nicsdk.AMin, nicsdk.AMax, nicsdk.AMax + 1, math.MaxInt32, 1 << 31,
			math.MaxUint32, uint32(om), uint32(om - 1), nicsdk.OMax, nicsdk.OMax + 1, nicsdk.LineRate,
			nicsdk.LineRate + 1, p.MinRate, p.MinRate - 1}
		for i := range nicsdk.RLCCWords {
			ctx[i] = words[r.IntN(len(words))]
		}
		ctx[nicsdk.CtxFlags] = []uint32{0, 1, math.MaxUint32}[r.IntN(3)]
		return ctx, "extreme"
	}
}

// logRate is a rate drawn log-uniformly from [MinRate, LineRate].
func (g *EventGen) logRate() uint32 {
	lo, hi := math.Log(float64(g.Params.MinRate)), math.Log(nicsdk.LineRate)
	return uint32(min(max(math.Exp(lo+g.Rng.Float64()*(hi-lo)), float64(g.Params.MinRate)), nicsdk.LineRate))
}

// state is the rate and base RTT the handler will use for ev on ctx.
func (g *EventGen) state(ev nicsdk.Event, ctx nicsdk.FlowCtx) (rate, base uint32) {
	if ctx[nicsdk.CtxFlags]&nicsdk.FlagInit == 0 {
		nicsdk.Init(&ctx, g.Params)
	}
	rate = min(max(ctx[nicsdk.CtxRate], g.Params.MinRate), nicsdk.LineRate)
	base = ctx[nicsdk.CtxBaseRTT]
	if rtt := ev.RTTNs; rtt != 0 && (base == 0 || rtt < base) {
		base = rtt
	}
	return rate, base
}

// FloatObs is the observation o_t in float64 for ev on ctx: what a float handler computes
// from the same RTT, base RTT and rate.
func (g *EventGen) FloatObs(ev nicsdk.Event, ctx nicsdk.FlowCtx) float64 {
	rate, base := g.state(ev, ctx)
	return Observation(ev.RTTNs, base, rate, g.Params)
}

// Event draws the next event of sequence seq on ctx. natural says it is an RTT event drawn
// the way a fidelity measurement wants: o_t uniform over the sampler's range (or a new flow's
// first RTT), not aimed at a threshold or an edge.
func (g *EventGen) Event(ctx nicsdk.FlowCtx, seq int) (_ nicsdk.Event, natural bool) {
	r := g.Rng
	g.ts += 1000 + r.Uint64N(50_000)
	ev := nicsdk.Event{Type: nicsdk.EvRTT, TimestampNs: g.ts, FlowID: uint32(seq)}
	switch k := r.IntN(20); {
	case k == 0:
		ev.Type = nicsdk.EvCNP
		return ev, false
	case k == 1:
		ev.Type = nicsdk.EvNACK
		return ev, false
	case k == 2:
		ev.Type, ev.TxBytes = nicsdk.EvTX, r.Uint32N(1<<16)
		return ev, false
	case k == 3:
		ev.Type = []nicsdk.EventType{4, 7, math.MaxUint32}[r.IntN(3)]
		ev.RTTNs = r.Uint32()
		return ev, false
	}
	rate, base := g.state(ev, ctx) // ev.RTTNs is 0 here: the base before this event
	if base == 0 {
		ev.RTTNs = 1000 + r.Uint32N(100_000)
		return ev, true
	}
	toRTT := func(o float64) uint32 { return RTTFor(o, rate, base, g.Params) }
	switch k := r.IntN(20); {
	case k < 8:
		ev.RTTNs = toRTT(float64(nicsdk.ObsMin(g.Params))/nicsdk.Q16One + r.Float64()*(SampleOMax(g.Params)+1))
		natural = true
	case k < 13:
		if v, ok := g.pickThr(g.input(nicsdk.FeatObs, 0)); ok {
			ev.RTTNs = toRTT(float64(v) / nicsdk.Q16One)
		} else if v, ok := g.pickThr(g.input(nicsdk.FeatInfl, 0)); ok {
			ev.RTTNs = uint32(min(max(math.Round(float64(v)*float64(base)/nicsdk.Q16One), 0), math.MaxUint32))
		} else {
			ev.RTTNs = toRTT(r.Float64() * SampleOMax(g.Params))
		}
	case k < 15:
		ev.RTTNs = uint32(float64(base) * (0.5 + r.Float64()/2))
	case k < 17:
		ev.RTTNs = []uint32{0, 1, base, math.MaxUint32}[r.IntN(4)]
	default:
		ev.RTTNs = uint32(min(float64(base)*(1+19*r.Float64()), math.MaxUint32))
	}
	return ev, natural
}
