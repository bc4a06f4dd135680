package rlcc

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// TestEventGen: the same seed draws the same contexts and events; every kind of start and
// event type appears; natural RTT events of valid flows give observations in the sampler's
// range, and events aimed at a threshold land within 2 LSB of one.
func TestEventGen(t *testing.T) {
	p := nicsdk.DefaultParams()
	draw := func(seed uint64) ([]nicsdk.FlowCtx, []nicsdk.Event, map[string]int, int) {
		g := EventGen{Rng: rand.New(rand.NewPCG(seed, 1)), Params: p, Thresholds: [][]int32{nil, {5 << 16}, nil, nil}}
		var ctxs []nicsdk.FlowCtx
		var evs []nicsdk.Event
		kinds := map[string]int{}
		inRange := 0
		for i := range 400 {
			ctx, how := g.StartCtx()
			kinds[how]++
			ctxs = append(ctxs, ctx)
			ev, natural := g.Event(ctx, i)
			evs = append(evs, ev)
			kinds[ev.Type.String()]++
			if natural && how == "valid" {
				o := g.FloatObs(ev, ctx)
				if o >= float64(nicsdk.ObsMin(p))/nicsdk.Q16One-0.01 && o <= SampleOMax(p)+1.01 {
					inRange++
				} else {
					t.Errorf("natural event %+v on a valid context: o = %v outside the sampler's range", ev, o)
				}
			}
		}
		return ctxs, evs, kinds, inRange
	}
	c1, e1, kinds, inRange := draw(7)
	c2, e2, _, _ := draw(7)
	if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(e1, e2) {
		t.Fatal("one seed, two different draws")
	}
	for _, k := range []string{"new flow", "valid", "thresholds", "garbage", "extreme", "rtt", "cnp", "nack", "tx"} {
		if kinds[k] == 0 {
			t.Errorf("no %q in 400 draws: %v", k, kinds)
		}
	}
	if inRange == 0 {
		t.Error("no natural RTT event on a valid context")
	}
}
