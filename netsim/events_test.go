package netsim

import (
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// eventTally is a fixed rate that counts the events of each type its engine hands it, and
// the bytes its TX events carry.
type eventTally struct {
	FixedRate
	n       [nicsdk.EvTX + 1]int
	txBytes int64
}

func (c *eventTally) Decide(ev nicsdk.Event, _ *nicsdk.FlowCtx) (uint32, int64, error) {
	c.n[ev.Type]++
	c.txBytes += int64(ev.TxBytes)
	return c.Rate, 0, nil
}

// With probes sent with the data (the default), a lone flow at 1/1000 of line rate decides
// once a burst: once a packet, 12.2 times a ms at 4 KB. Sent at once, it decides once an RTT
// whatever its rate, about 200 times as often.
func TestProbePolicy(t *testing.T) {
	const durNs = 5_000_000
	decisions := func(p Probe) (int, *sim) {
		c := &eventTally{FixedRate: FixedRate{nicsdk.LineRate / 1000}}
		s := runSim(t, manyToOne(t, 1), c, Config{DurationNs: durNs, Probe: p}, nil)
		if c.n[nicsdk.EvTX]+c.n[nicsdk.EvCNP]+c.n[nicsdk.EvNACK] != 0 {
			t.Fatalf("probe %s: events other than RTT replies: %v", p, c.n)
		}
		return c.n[nicsdk.EvRTT], s
	}
	withTX, s := decisions(ProbeWithTX)
	bursts := s.stats.sentAll / int64(s.cfg.MTU) // one packet a burst at this rate
	if d := int64(withTX) - bursts; d < -1 || d > 0 {
		t.Errorf("probes with the data: %d decisions for %d one-packet bursts: want one a burst (the last reply may be in flight)", withTX, bursts)
	}
	atOnce, s := decisions(ProbeAtOnce)
	rttPs := s.cfg.baseRTTPs()
	// A probe waits for a data packet on the uplink at most once a burst; else it takes
	// the empty path's RTT.
	if lo, hi := int64(durNs*1000)/(rttPs+s.cfg.serPs(s.cfg.MTU))-1, int64(durNs*1000)/rttPs; int64(atOnce) < lo || int64(atOnce) > hi {
		t.Errorf("probes at once: %d decisions in %d ns: want one an RTT of %d ps, %d to %d", atOnce, durNs, rttPs, lo, hi)
	}
	if s.stats.sentAll != bursts*int64(s.cfg.MTU) {
		t.Errorf("probes at once sent %d data bytes, with the data %d: the data's pace must not change", s.stats.sentAll, bursts*int64(s.cfg.MTU))
	}
}

// With TX events every burst reaches the engine as EvTX with its bytes; a controller with a
// timer of its own is refused.
func TestTXEvents(t *testing.T) {
	c := &eventTally{FixedRate: FixedRate{nicsdk.LineRate / 2}}
	s := runSim(t, manyToOne(t, 2), c, Config{DurationNs: 2_000_000, TXEvents: true}, nil)
	if c.txBytes != s.stats.sentAll || c.n[nicsdk.EvTX] == 0 {
		t.Errorf("%d TX events carried %d bytes; the flows sent %d", c.n[nicsdk.EvTX], c.txBytes, s.stats.sentAll)
	}
	if c.n[nicsdk.EvRTT] == 0 || c.n[nicsdk.EvTX] < 2*c.n[nicsdk.EvRTT] {
		t.Errorf("%d TX events, %d RTT events: want a TX event every burst, more than one an RTT at 50 Gb/s", c.n[nicsdk.EvTX], c.n[nicsdk.EvRTT])
	}
	_, err := Run(manyToOne(t, 2), DefaultDCQCN, Config{TXEvents: true})
	if err == nil || !strings.Contains(err.Error(), "TX events") {
		t.Errorf("DCQCN with TX events: %v, want a refusal", err)
	}
	if _, err := Run(manyToOne(t, 2), c, Config{Probe: ProbeBeforeTX + 1}); err == nil {
		t.Error("an unknown probe policy: no error")
	}
}

// Swift's steady state is its fixed point: N flows sharing a link at cwnd packets each, the
// link full (cwnd·MTU over the RTT is the fair share) and the RTT at the target of that
// window. AIMD saws around it: the measured mean RTT is within 30% of it, the link at least
// 93% busy and the flows fair; and with more flows, smaller windows raise the target (flow
// scaling) and the RTT with it.
func TestSwiftFixedPoint(t *testing.T) {
	var last float64
	for _, n := range []int{16, 64} {
		cfg := Config{DurationNs: 40_000_000}
		r := run(t, manyToOne(t, n), DefaultSwift, cfg)
		res, _ := cfg.resolved()
		sw := DefaultSwift.forNetwork(res).(Swift)
		share := sw.lineBPerNs / float64(n) // bytes a ns
		rtt := sw.target(1)
		for range 100 {
			rtt = sw.target(share * rtt / sw.mtuBytes)
		}
		got := r.RTTInflation * r.BaseRTTUs * 1000
		t.Logf("%d flows: mean RTT %.0f ns, the fixed point's %.0f ns (window %.2f packets); SU %.2f%%, Jain %.3f", n, got, rtt, share*rtt/sw.mtuBytes, r.Utilization, r.Jain)
		if math.Abs(got-rtt) > 0.3*rtt || r.Utilization < 93 || r.Jain < 0.95 || got <= last {
			t.Errorf("%d flows: mean RTT %.0f ns (%.0f ns with fewer flows), SU %.2f%%, Jain %.3f; want the fixed point's %.0f ns ± 30%%, more than with fewer flows, SU ≥ 93%%, Jain ≥ 0.95",
				n, got, last, r.Utilization, r.Jain, rtt)
		}
		last = got
	}
}

// PFC per port pauses only the hosts whose data fills their port's share of the buffer: with
// eight hosts overloading one receiver and a ninth sending to another receiver alone, global
// PFC pauses the ninth too, per-port PFC leaves it at line rate; neither drops.
func TestPFCPerPort(t *testing.T) {
	scen := Scenario{Name: "incast beside a lone flow", Hosts: 11, Long: -1}
	for h := range 8 {
		scen.Flows = append(scen.Flows, Flow{Src: h, Dst: 8})
	}
	scen.Flows = append(scen.Flows, Flow{Src: 9, Dst: 10})
	lone := len(scen.Flows) - 1
	gbps := func(perPort bool) (float64, *sim) {
		s := runSim(t, scen, FixedRate{nicsdk.LineRate}, Config{DurationNs: 2_000_000, PFC: true, PFCPerPort: perPort}, nil)
		if s.stats.droppedAll != 0 || s.stats.pauses == 0 {
			t.Errorf("per port %v: %d bytes dropped, %d pauses; want none dropped, some pauses", perPort, s.stats.droppedAll, s.stats.pauses)
		}
		window := float64(s.cfg.DurationNs - s.cfg.WarmupNs)
		return float64(s.flows[lone].inWindow) * 8 / window, s
	}
	global, _ := gbps(false)
	perPort, s := gbps(true)
	t.Logf("the lone flow: %.1f Gb/s under global PFC, %.1f per port", global, perPort)
	if perPort < 0.95*s.cfg.LinkGbps || global > 0.9*perPort {
		t.Errorf("the lone flow: %.1f Gb/s under global PFC, %.1f per port; want per port at line rate and global well under it", global, perPort)
	}
	if _, err := Run(scen, FixedRate{1}, Config{PFCPerPort: true}); err == nil {
		t.Error("PFC per port without PFC: no error")
	}
}

// TestProbeBeforeTX: under ProbeBeforeTX a flow's probe leaves ahead of its burst's data, so
// it does not wait at the switch behind the burst's last packet: a lone flow at half the line
// rate measures one 4 KB packet's serialization (0.33 µs) less than under ProbeWithTX, and
// its replies come back a burst sooner, so it decides more often.
func TestProbeBeforeTX(t *testing.T) {
	scen, err := ManyToOne(1)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p Probe) *Result {
		r, err := Run(scen, FixedRate{nicsdk.LineRate / 2}, Config{Probe: p, DurationNs: 2_000_000})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	after, first := run(ProbeWithTX), run(ProbeBeforeTX)
	base := after.BaseRTTUs
	gotUs := (after.RTTInflation - first.RTTInflation) * base
	if math.Abs(gotUs-0.328) > 0.05 || first.Decisions <= after.Decisions {
		t.Fatalf("tx RTT %.3f µs, tx-first %.3f µs (%.3f µs apart), decisions %d and %d; want 0.328 µs apart and more decisions",
			after.RTTInflation*base, first.RTTInflation*base, gotUs, after.Decisions, first.Decisions)
	}
}
