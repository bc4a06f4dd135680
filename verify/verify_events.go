package verify

import (
	"math/rand/v2"

	"github.com/nicc-dev/nicc/quantize"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// Verify's RL-CC event sequences: flows from chosen starting contexts, driven by RTT and other
// events whose observations land near the policy's thresholds.

// seqGen draws RL-CC event sequences and runs them through the golden handler.
type seqGen struct {
	c      *Input
	out    *Result
	gen    rlcc.EventGen
	seq    int
	policy func(x []int32, state []uint32) int32

	lstm *quantize.LSTMIR // the policy, when it is an LSTM: its raw y and float twin are traced

	// layout is the compile's input layout; obs0 and obs1 its slots of o_t and o_{t-1} (-1: none).
	layout     nicsdk.Layout
	obs0, obs1 int

	// the golden policy's last call; for an LSTM, yRaw is its y before the output table
	called bool
	x      []int32
	y      int32
	yRaw   int32
}

func (c *Input) newSeqGen(out *Result, rng *rand.Rand, ir *quantize.TreeIR) *seqGen {
	l := c.Layout
	g := &seqGen{c: c, out: out, gen: rlcc.EventGen{Rng: rng, Params: c.Params, Layout: l, Thresholds: ThresholdsByFeature(l.Inputs(), ir)},
		layout: l, obs0: slotIndex(l, nicsdk.FeatObs, 0), obs1: slotIndex(l, nicsdk.FeatObs, 1)}
	g.lstm, _ = c.Policy.(*quantize.LSTMIR)
	g.x = make([]int32, l.Inputs())
	g.policy = func(x []int32, state []uint32) int32 {
		g.called = true
		copy(g.x, x)
		if g.lstm != nil {
			g.yRaw = g.lstm.Step(x, state)
			g.y = g.lstm.Returned(g.yRaw)
			return g.y
		}
		g.y = c.Policy.Call(x, state)
		return g.y
	}
	return g
}

// next draws event sequences holding n events in all: each starts from a flow context
// (new, valid, at thresholds, garbage or extreme words) and runs up to 64 events (mostly
// RTT, aimed at observations across the range and near o's thresholds; CNP, NACK, TX and
// unknown types; RTTs of zero, below the base, and saturating). The golden handler,
// nicsdk.OnEventEx around the golden policy (quantize.Policy.Call), gives each event's rate and context. The handler's
// decisions on naturally drawn RTT events of new and valid flows go into the fidelity; for an
// LSTM, every decision of a new flow's sequence, against the float LSTM run along the same
// sequence with its own state on the same inputs.
func (g *seqGen) next(n int) []sequence {
	c, rng := g.c, g.gen.Rng
	var seqs []sequence
	total := 0
	for total < n {
		start, how := g.gen.StartCtx()
		s := sequence{start: start, how: how}
		ctx := start
		prevO, havePrev := 0.0, false
		var floatSt *model.State // an LSTM's float twin along a new flow's sequence
		if g.lstm != nil && how == "new flow" {
			floatSt = c.Model.NewState()
		}
		for range min(1+rng.IntN(64), n-total) {
			ev, natural := g.gen.Event(ctx, g.seq)
			oF := g.gen.FloatObs(ev, ctx)
			before := ctx
			g.called = false
			rate := nicsdk.OnEventLayout(ev, &ctx, c.Params, g.layout, c.Policy.StateWords(), quantize.Out(c.Policy), g.policy)
			s.events = append(s.events, event{ev: ev, before: before, rate: rate, after: ctx})
			if !g.called {
				continue
			}
			g.out.Report.RTTEvents++
			if floatSt != nil {
				xq := make([]float64, len(g.x))
				for i, v := range g.x {
					xq[i] = c.Policy.InputFormats()[i].Value(v)
				}
				g.out.Decisions.AddOutputs(g.lstm.OutValue(g.yRaw), c.Model.Eval(floatSt, xq)[0])
			}
			if natural && (how == "new flow" || how == "valid") && g.lstm == nil {
				// The window in float: the quantized inputs, but o_t as drawn and o_{t-1}
				// as drawn the event before, where the layout has them.
				xf := make([]float64, len(g.x))
				for i, v := range g.x {
					xf[i] = float64(v) / nicsdk.Q16One
				}
				if g.obs0 >= 0 {
					xf[g.obs0] = oF
				}
				if g.obs1 >= 0 && havePrev {
					xf[g.obs1] = prevO
				}
				g.out.Decisions.Add(xf, g.x, quantize.Y(c.Policy, g.x, g.y))
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

// slotIndex is the index of feature f at lag in l's inputs, or -1.
func slotIndex(l nicsdk.Layout, f nicsdk.Feature, lag int) int {
	for i, s := range l.Slots() {
		if s == (nicsdk.Slot{Feature: f, Lag: lag}) {
			return i
		}
	}
	return -1
}
