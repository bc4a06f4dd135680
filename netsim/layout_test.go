package netsim

import (
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// flowOf wraps a controller and says, while it decides, which flow the event is for: the
// policies below keep per-flow records of the windows they were fed.
type flowOf struct {
	Controller
	flow *uint32
}

func (c flowOf) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	*c.flow = ev.FlowID
	return c.Controller.Decide(ev, ctx)
}

// windowCheck checks, per flow, that each window's older states are the newer states of the
// flow's earlier decisions (lag j = the newest state j decisions back, or an idle link's
// values before the first), with same(a, b) the equality of one feature's values.
type windowCheck[T any] struct {
	t      *testing.T
	l      nicsdk.Layout
	init   [nicsdk.NumFeatures]T
	same   func(a, b T) bool
	past   map[uint32][][]T // per flow, the newest state of each decision, oldest first
	checks int
}

func (w *windowCheck[T]) see(flow uint32, x []T) {
	nf := w.l.Features.Count()
	past := w.past[flow]
	for i, s := range w.l.Slots() {
		if s.Lag == 0 {
			continue
		}
		want := w.init[s.Feature]
		if k := len(past) - s.Lag; k >= 0 {
			want = past[k][i%nf]
		}
		if !w.same(x[i], want) {
			w.t.Fatalf("%v: flow %d decision %d: %s = %v, want %v", w.l, flow, len(past), s.Name(), x[i], want)
		}
		w.checks++
	}
	w.past[flow] = append(past, append([]T(nil), x[:nf]...))
}

// The integer runtime and the float teacher's twin feed a window of any layout in closed loop:
// history 3 of action and observation, and the inflation and the rate over two states. The
// policy (slow down as the RTT inflation or o grows) controls the incast with each, every
// input within its declared range, each older state the flow's earlier newest one.
func TestRLCCLayouts(t *testing.T) {
	p := nicsdk.DefaultParams()
	p.InitRate = nicsdk.LineRate / 16 // the flows start at their fair share
	scen := manyToOne(t, 16)
	cfg := Config{DurationNs: 5_000_000, LatencyNs: 500}
	for _, l := range []nicsdk.Layout{{History: 3, Features: 1<<nicsdk.FeatAction | 1<<nicsdk.FeatObs},
		{History: 2, Features: 1<<nicsdk.FeatInfl | 1<<nicsdk.FeatRate}} {
		slots := l.Slots()
		ranges := nicsdk.RLCCInputRanges(p, l)
		// y from the newest state: o (default scale) or the inflation above 1.6, each at lag 0.
		yOf := func(x []float64) float64 {
			if l.Features.Has(nicsdk.FeatObs) {
				return -x[1] / 4
			}
			return -(x[0] - 1.6) * 4
		}
		var flow uint32
		ints := &windowCheck[int32]{t: t, l: l, past: map[uint32][][]int32{}, same: func(a, b int32) bool { return a == b }}
		for f := range nicsdk.NumFeatures {
			ints.init[f] = nicsdk.HistoryInit(f, p)
		}
		golden := &RLCC{Label: "golden", Params: p, Layout: l, Policy: func(x []int32, _ []uint32) int32 {
			xf := make([]float64, len(x))
			for i, v := range x {
				if v < ranges[i].Min || v > ranges[i].Max {
					t.Fatalf("%v: %s = %d outside [%d, %d]", l, ranges[i].Name, v, ranges[i].Min, ranges[i].Max)
				}
				xf[i] = float64(v) / nicsdk.Q16One
			}
			ints.see(flow, x)
			return int32(math.Round(min(max(yOf(xf), -1), 1) * nicsdk.Q16One))
		}}
		gr := run(t, scen, flowOf{golden, &flow}, cfg)

		target, _, scale := rlcc.Real(p)
		floats := &windowCheck[float64]{t: t, l: l, past: map[uint32][][]float64{},
			init: [nicsdk.NumFeatures]float64{1, -target * scale, 1, float64(p.InitRate) / nicsdk.LineRate},
			same: func(a, b float64) bool { return float32(a) == float32(b) }}
		teacher := &FloatRLCC{Label: "float", Params: p, Layout: l, Policy: func(fl uint32, x []float64) float64 {
			if len(x) != len(slots) {
				t.Fatalf("%v: %d inputs", l, len(x))
			}
			floats.see(fl, x)
			return min(max(yOf(x), -1), 1)
		}}
		fr := run(t, scen, teacher, cfg)
		t.Logf("%v: golden SU %.1f%% FR %.1f drops %.3g Gb/s (%d window checks); float SU %.1f%% FR %.1f drops %.3g Gb/s (%d)",
			l, gr.Utilization, gr.Fairness, gr.DropGbps, ints.checks, fr.Utilization, fr.Fairness, fr.DropGbps, floats.checks)
		for _, c := range []struct {
			name   string
			r      *Result
			checks int
		}{{"golden", gr, ints.checks}, {"float", fr, floats.checks}} {
			if c.checks < 1000 || c.r.Utilization < 80 || c.r.DropGbps > 0 {
				t.Errorf("%v %s: %d window checks, SU %.1f%%, drops %.3g Gb/s: want the incast controlled", l, c.name, c.checks, c.r.Utilization, c.r.DropGbps)
			}
		}
	}
}

// A layout that does not fit beside the policy's words is refused by Run, not a panic.
func TestRLCCLayoutRefused(t *testing.T) {
	all := nicsdk.Layout{History: 3, Features: nicsdk.AllFeatures}
	c := &RLCC{Label: "x", Params: nicsdk.DefaultParams(), Layout: all, Words: 1,
		Policy: func(x []int32, _ []uint32) int32 { return 0 }}
	if _, err := Run(manyToOne(t, 2), c, Config{DurationNs: 10_000}); err == nil || !strings.Contains(err.Error(), "context words") {
		t.Errorf("history 3 of all four beside a state word: %v, want the context words refused", err)
	}
	f := &FloatRLCC{Label: "x", Params: nicsdk.DefaultParams(), Layout: nicsdk.Layout{History: 9, Features: 2},
		Policy: func(uint32, []float64) float64 { return 0 }}
	if _, err := Run(manyToOne(t, 2), f, Config{DurationNs: 10_000}); err == nil {
		t.Error("float history 9: no error")
	}
}
