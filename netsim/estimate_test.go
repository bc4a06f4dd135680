package netsim

import (
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// eventCounter counts the events of one type its controller decides on.
type eventCounter struct {
	Controller
	typ nicsdk.EventType
	n   int
}

func (c *eventCounter) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	if ev.Type == c.typ {
		c.n++
	}
	return c.Controller.Decide(ev, ctx)
}

// Estimate is an upper bound on what a run fires and decides: line-rate senders that drop
// (the most packets), DCQCN (ECN, CNPs and timers), long-short, a small MTU and a long delay.
func TestEstimateBounds(t *testing.T) {
	m16, _ := ManyToOne(16)
	ls, _ := LongShort(2, 2<<20, 500_000)
	a2a, _ := AllToAll(3)
	for _, c := range []struct {
		name string
		scen Scenario
		ctrl Controller
		cfg  Config
	}{
		{"fixed line rate", m16, FixedRate{Rate: nicsdk.LineRate}, Config{DurationNs: 2_000_000}},
		{"dcqcn", m16, DefaultDCQCN, Config{DurationNs: 2_000_000, ECN: &DefaultECN, PFC: true}},
		{"swift, long-short", ls, DefaultSwift, Config{DurationNs: 2_000_000}},
		{"swift, mtu 64, 10 us links", a2a, DefaultSwift, Config{DurationNs: 500_000, MTU: 64, PropNs: 10_000}},
	} {
		fp, err := Estimate(c.scen, c.cfg, c.ctrl.TimerNs())
		if err != nil {
			t.Fatal(err)
		}
		ctrl := &eventCounter{Controller: c.ctrl, typ: nicsdk.EvRTT}
		r, err := Run(c.scen, ctrl, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if float64(r.SimEvents) > fp.Events || float64(ctrl.n) > fp.Decisions || ctrl.n == 0 {
			t.Errorf("%s: %d events, %d RTT decisions; estimated at most %.0f and %.0f", c.name, r.SimEvents, ctrl.n, fp.Events, fp.Decisions)
		}
		t.Logf("%s: %d events (estimate %.3g), %d RTT decisions (estimate %.3g), %.1f MiB estimated", c.name, r.SimEvents, fp.Events, ctrl.n, fp.Decisions, fp.Bytes/(1<<20))
	}
}
