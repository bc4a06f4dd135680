package compiler

import (
	"math"
	"math/rand/v2"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// Verify's RL-CC event sequences: flows from chosen starting contexts, driven by RTT and other
// events whose observations land near the policy's thresholds.

// seqGen draws RL-CC event sequences and runs them through the golden handler.
type seqGen struct {
	c      *compilation
	rng    *rand.Rand
	p      nicsdk.Params
	thr    [][]int32
	ts     uint64
	seq    int
	policy func(x [4]int32, state []uint32) int32

	// the golden policy's last call; yRaw is an LSTM's y before the multiplier fold
	called bool
	x      [nicsdk.RLCCInputs]int32
	y      int32
	yRaw   int32
}

func (c *compilation) newSeqGen(rng *rand.Rand, splits []splitPath) *seqGen {
	g := &seqGen{c: c, rng: rng, p: c.params, thr: thresholdsByFeature(nicsdk.RLCCInputs, splits)}
	g.policy = func(x [4]int32, state []uint32) int32 {
		g.called, g.x = true, x
		if c.lstm != nil {
			g.yRaw = c.lstm.Step(x[:], state)
			g.y = c.foldY(g.yRaw)
			return g.y
		}
		g.y = c.goldenStep(x[:], state)
		return g.y
	}
	return g
}

// next draws event sequences holding n events in all: each starts from a flow context
// (new, valid, at thresholds, garbage or extreme words) and runs up to 64 events (mostly
// RTT, aimed at observations across the range and near o's thresholds; CNP, NACK, TX and
// unknown types; RTTs of zero, below the base, and saturating). The golden handler,
// nicsdk.OnEvent around TreeIR.Eval, gives each event's rate and context. The handler's
// decisions on naturally drawn RTT events of new and valid flows go into the fidelity; for an
// LSTM, every decision of a new flow's sequence, against the float LSTM run along the same
// sequence with its own state on the same inputs.
func (g *seqGen) next(n int) []sequence {
	c, rng := g.c, g.rng
	var seqs []sequence
	total := 0
	for total < n {
		start, how := g.startCtx()
		s := sequence{start: start, how: how}
		ctx := start
		prevO, havePrev := 0.0, false
		var floatSt *model.State // an LSTM's float twin along a new flow's sequence
		if c.lstm != nil && how == "new flow" {
			floatSt = c.m.NewState()
		}
		for range min(1+rng.IntN(64), n-total) {
			ev, natural := g.event(ctx, g.seq)
			oF := g.floatObs(ev, ctx)
			before := ctx
			g.called = false
			out := nicsdk.OutY
			if c.fold != nil {
				out = nicsdk.OutM
			}
			rate := nicsdk.OnEventEx(ev, &ctx, g.p, c.stateWords(), out, g.policy)
			s.events = append(s.events, event{ev: ev, before: before, rate: rate, after: ctx})
			if !g.called {
				continue
			}
			c.verify.RTTEvents++
			if floatSt != nil {
				xq := make([]float64, len(g.x))
				for i, v := range g.x {
					xq[i] = c.inputs[i].Value(v)
				}
				c.verify.decisions.addOutputs(c.lstm.OutValue(g.yRaw), c.m.Eval(floatSt, xq)[0])
			}
			if natural && (how == "new flow" || how == "valid") && c.lstm == nil {
				oPrev := float64(g.x[3]) / nicsdk.Q16One
				if havePrev {
					oPrev = prevO
				}
				xf := []float64{float64(g.x[0]) / nicsdk.Q16One, oF, float64(g.x[2]) / nicsdk.Q16One, oPrev}
				c.verify.decisions.add(xf, g.x[:], g.y)
			}
			// o_{t-1} in float is this o_t when it was drawn naturally; else the context's.
			prevO, havePrev = oF, natural
		}
		total += len(s.events)
		seqs = append(seqs, s)
		g.seq++
	}
	return seqs
}

// pickThr is a threshold of input f ±2 LSB, or false when f has none.
func (g *seqGen) pickThr(f int) (int64, bool) {
	ts := g.thr[f]
	if len(ts) == 0 {
		return 0, false
	}
	return int64(ts[g.rng.IntN(len(ts))]) + g.rng.Int64N(4) - 1, true
}

func (g *seqGen) startCtx() (nicsdk.FlowCtx, string) {
	r, p := g.rng, g.p
	var ctx nicsdk.FlowCtx
	for i := nicsdk.RLCCWords; i < nicsdk.CtxWords; i++ {
		ctx[i] = r.Uint32() // words RL-CC must leave alone
	}
	valid := func() {
		ctx[nicsdk.CtxRate] = g.logRate()
		ctx[nicsdk.CtxBaseRTT] = 1000 + r.Uint32N(100_000)
		ctx[nicsdk.CtxA1] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxA2] = uint32(randIn(r, nicsdk.AMin, nicsdk.AMax))
		ctx[nicsdk.CtxO1] = uint32(randIn(r, nicsdk.ObsMin(p), int32(math.Round(rlcc.SampleOMax(p)*float64(nicsdk.Q16One)))))
		ctx[nicsdk.CtxFlags] = nicsdk.FlagInit
		if r.IntN(4) == 0 {
			ctx[nicsdk.CtxFlags] |= r.Uint32() &^ 1
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
		for _, w := range []struct{ word, f int }{{nicsdk.CtxA1, 0}, {nicsdk.CtxA2, 2}, {nicsdk.CtxO1, 3}} {
			if v, ok := g.pickThr(w.f); ok && r.IntN(4) != 0 {
				ctx[w.word] = uint32(int32(v))
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
func (g *seqGen) logRate() uint32 {
	lo, hi := math.Log(float64(g.p.MinRate)), math.Log(nicsdk.LineRate)
	return uint32(min(max(math.Exp(lo+g.rng.Float64()*(hi-lo)), float64(g.p.MinRate)), nicsdk.LineRate))
}

// state is the rate and base RTT the handler will use for ev on ctx.
func (g *seqGen) state(ev nicsdk.Event, ctx nicsdk.FlowCtx) (rate, base uint32) {
	if ctx[nicsdk.CtxFlags]&nicsdk.FlagInit == 0 {
		nicsdk.Init(&ctx, g.p)
	}
	rate = min(max(ctx[nicsdk.CtxRate], g.p.MinRate), nicsdk.LineRate)
	base = ctx[nicsdk.CtxBaseRTT]
	if rtt := ev.RTTNs; rtt != 0 && (base == 0 || rtt < base) {
		base = rtt
	}
	return rate, base
}

// floatObs is the observation o_t in float64 for ev on ctx: what a float handler computes
// from the same RTT, base RTT and rate.
func (g *seqGen) floatObs(ev nicsdk.Event, ctx nicsdk.FlowCtx) float64 {
	rate, base := g.state(ev, ctx)
	return rlcc.Observation(ev.RTTNs, base, rate, g.p)
}

// event draws the next event of sequence seq on ctx. natural says it is an RTT event drawn
// the way a fidelity measurement wants: o_t uniform over the sampler's range (or a new flow's
// first RTT), not aimed at a threshold or an edge.
func (g *seqGen) event(ctx nicsdk.FlowCtx, seq int) (_ nicsdk.Event, natural bool) {
	r := g.rng
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
	toRTT := func(o float64) uint32 { return rlcc.RTTFor(o, rate, base, g.p) }
	switch k := r.IntN(20); {
	case k < 8:
		ev.RTTNs = toRTT(float64(nicsdk.ObsMin(g.p))/nicsdk.Q16One + r.Float64()*(rlcc.SampleOMax(g.p)+1))
		natural = true
	case k < 13:
		if v, ok := g.pickThr(1); ok {
			ev.RTTNs = toRTT(float64(v) / nicsdk.Q16One)
		} else {
			ev.RTTNs = toRTT(r.Float64() * rlcc.SampleOMax(g.p))
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
