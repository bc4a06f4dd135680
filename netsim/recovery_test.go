package netsim

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// runSim runs scen under c and cfg, with lose dropping data packets at the switch, and returns
// the run's state.
func runSim(t *testing.T, scen Scenario, c Controller, cfg Config, lose func(packet) bool) *sim {
	t.Helper()
	s, err := newSim(scen, c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.lose = lose
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s
}

// inFlightData is the data bytes on the wire or in the switch's queues when the run ended.
func (s *sim) inFlightData() int64 {
	var n int64
	queued := func(e *event) {
		if (e.kind == evSwitchArrive || e.kind == evHostArrive) && e.pkt.kind == pktData {
			n += int64(e.pkt.size)
		}
	}
	for _, k := range s.q.keys {
		if k.slot >= 0 {
			queued(&s.q.slots[k.slot])
		}
	}
	for _, l := range s.q.lanes {
		for i := range l.len() {
			queued(&l.at(i).e)
		}
	}
	for i := range s.ports {
		p := &s.ports[i]
		for i := range p.len() {
			if pk := p.at(i); pk.kind == pktData {
				n += int64(pk.size)
			}
		}
	}
	return n
}

// Under overload (4 flows at half the line rate each into one port) the buffer drops data and
// go-back-N sends it again: every byte sent, sent again included, was delivered in order,
// discarded by its receiver, dropped at the switch or is still in flight; each receiver's
// in-order bytes are all the flow's first bytes; goodput counts only them, below the port's
// utilization.
func TestBytesConservedWithRetransmissions(t *testing.T) {
	s := runSim(t, manyToOne(t, 4), FixedRate{nicsdk.LineRate / 2}, Config{DurationNs: 4_000_000, GoBackN: true}, nil)
	var delivered int64
	for i := range s.flows {
		f := &s.flows[i]
		delivered += f.rcvNxt
		if f.rcvNxt == 0 || f.rcvNxt > f.sentMax || f.una > f.rcvNxt {
			t.Errorf("flow %d: %d bytes delivered in order, %d sent, %d acknowledged", i, f.rcvNxt, f.sentMax, f.una)
		}
	}
	st := &s.stats
	if got := delivered + st.discardedAll + st.droppedAll + s.inFlightData(); got != st.sentAll {
		t.Errorf("sent %d bytes; delivered %d + discarded %d + dropped %d + in flight %d = %d", st.sentAll, delivered, st.discardedAll, st.droppedAll, s.inFlightData(), got)
	}
	r := s.result()
	if rc := r.Recovery; r.DropGbps == 0 || rc == nil || rc.ResentGbps == 0 || rc.DiscardedGbps == 0 || rc.NACKs == 0 {
		t.Errorf("overload: dropped %v Gb/s, recovery %+v: want it at work", r.DropGbps, rc)
	}
	if !(r.Goodput*100 < r.Utilization-1) {
		t.Errorf("goodput %.4f against SU %.2f%%: discarded data must not count as goodput", r.Goodput, r.Utilization)
	}
}

// One flow of 64 packets, its 10th dropped once: the next packet draws one NACK for the 10th's
// first byte, the sender goes back and sends from it again (the packets after it in flight are
// discarded), the policy sees one NACK event, and every byte arrives in order.
func TestGoBackNOnAHandBuiltLoss(t *testing.T) {
	const mtu, pkts = 4096, 64
	scen := Scenario{Name: "one flow", Hosts: 2, Flows: []Flow{{Src: 0, Dst: 1, Bytes: pkts * mtu}}, Long: -1}
	lost := 0
	lose := func(pk packet) bool {
		if pk.seq == 9*mtu && lost == 0 {
			lost++
			return true
		}
		return false
	}
	c := &eventCounter{Controller: FixedRate{nicsdk.LineRate / 4}, typ: nicsdk.EvNACK}
	s := runSim(t, scen, c, Config{DurationNs: 1_000_000, WarmupNs: 1, GoBackN: true}, lose)
	f := &s.flows[0]
	st := &s.stats
	if lost != 1 || f.rcvNxt != pkts*mtu || f.finished < 0 || c.n != 1 || st.nacks != 1 || st.timeouts != 0 {
		t.Fatalf("lost %d, delivered %d of %d bytes (finished %v), %d NACK events, %d NACKs, %d timeouts", lost, f.rcvNxt, pkts*mtu, f.finished >= 0, c.n, st.nacks, st.timeouts)
	}
	// Sent again: the lost packet and what followed it before the NACK came back; discarded:
	// what followed it.
	if st.resent < mtu || st.discarded != st.resent-mtu || st.sentAll != pkts*mtu+st.resent {
		t.Errorf("resent %d, discarded %d, sent %d bytes in all", st.resent, st.discarded, st.sentAll)
	}
}

// A lost retransmission draws no second NACK (one per gap): the retransmission timer goes
// back. A lost tail has no later packet to draw a NACK: the timer at the tail sends it again.
func TestRetransmissionTimeouts(t *testing.T) {
	const mtu, pkts = 4096, 32
	for _, c := range []struct {
		name  string
		seq   int64
		times int
	}{{"the retransmission lost too", 5 * mtu, 2}, {"the tail lost", (pkts - 1) * mtu, 1}} {
		scen := Scenario{Name: "one flow", Hosts: 2, Flows: []Flow{{Src: 0, Dst: 1, Bytes: pkts * mtu}}, Long: -1}
		lost := 0
		lose := func(pk packet) bool {
			if pk.seq == c.seq && lost < c.times {
				lost++
				return true
			}
			return false
		}
		s := runSim(t, scen, FixedRate{nicsdk.LineRate / 4}, Config{DurationNs: 5_000_000, WarmupNs: 1, RTONs: 500_000, GoBackN: true}, lose)
		f := &s.flows[0]
		if lost != c.times || f.rcvNxt != pkts*mtu || s.stats.timeouts != 1 {
			t.Errorf("%s: lost %d, delivered %d of %d bytes, %d timeouts (want 1)", c.name, lost, f.rcvNxt, pkts*mtu, s.stats.timeouts)
		}
		// The timeout waits out the RTO: the flow finishes after it.
		if f.finished < 500_000_000 {
			t.Errorf("%s: finished at %d ps, before the 500 µs timeout", c.name, f.finished)
		}
	}
}

// With nothing lost, a finite flow's receiver acknowledges its last byte: the sender learns
// its tail arrived even when no probe follows it, and no timer fires. Flows of 5 to 8 packets
// at half the line rate send their last burst while their first probe is still in flight.
func TestTailAcknowledged(t *testing.T) {
	scen := Scenario{Name: "short flows", Hosts: 4, Long: -1}
	for i := range 60 {
		scen.Flows = append(scen.Flows, Flow{Src: i % 3, Dst: 3, StartNs: int64(i) * 3_000, Bytes: int64(5+i%4) * 4096})
	}
	s := runSim(t, scen, FixedRate{nicsdk.LineRate / 2}, Config{DurationNs: 4_000_000, WarmupNs: 1, GoBackN: true}, nil)
	for i, f := range s.flows {
		if f.finished < 0 || f.una != f.Bytes {
			t.Fatalf("flow %d: finished at %d, acknowledged %d of %d bytes", i, f.finished, f.una, f.Bytes)
		}
	}
	if s.stats.timeouts != 0 || s.stats.resent != 0 || s.stats.droppedAll != 0 {
		t.Errorf("%d timeouts, %d bytes sent again, %d dropped: want none", s.stats.timeouts, s.stats.resent, s.stats.droppedAll)
	}
}

// TestWindowAsCCsim: with a window, flows held at line rate fill the bottleneck's queue with
// what their windows hold and drop nothing, as CCsim's QPs do (testdata/ccsim/calibration.json,
// line_rate: its queue at 2→1 and 4→1 holds 95.9 and 200.8 µs, nothing dropped); without it
// the same load overflows the buffer. A window whose acknowledgements are lost (the probes
// dropped) still goes back after the retransmission timeout.
func TestWindowAsCCsim(t *testing.T) {
	cfg := Config{MTU: 1024, BufferBytes: 10 << 20, PropNs: 2000, BurstBytes: 4096, GoBackN: true, WindowBytes: 640 << 10,
		DurationNs: 20_000_000, WarmupNs: 5_000_000}
	for _, c := range []struct {
		flows  int
		ccsimQ float64 // CCsim's mean packet latency less the empty path's, µs
	}{{2, 95.9}, {4, 200.8}} {
		scen, err := ManyToOne(c.flows)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(scen, FixedRate{nicsdk.LineRate}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.DropGbps != 0 || r.Utilization < 99.5 || math.Abs(r.QueueMeanUs-c.ccsimQ) > 0.1*c.ccsimQ {
			t.Errorf("%d flows at line rate: SU %.1f%%, QL %.1f µs (CCsim %.1f), %.2f Gb/s dropped; want a full link, CCsim's queue within 10%%, no drops",
				c.flows, r.Utilization, r.QueueMeanUs, c.ccsimQ, r.DropGbps)
		}
		noWindow := cfg
		noWindow.WindowBytes = 0
		if r, err := Run(scen, FixedRate{nicsdk.LineRate}, noWindow); err != nil || r.DropGbps < 1 {
			t.Errorf("%d flows at line rate without a window: %v Gb/s dropped (%v); want the buffer overflowing", c.flows, r.DropGbps, err)
		}
	}
	// A buffer that drops most of what 8 windows send: every flow still delivers, each going
	// back on NACKs or the timer, none stuck with a full window.
	small := cfg
	small.BufferBytes, small.WindowBytes, small.RTONs = 64<<10, 64<<10, 200_000
	scen, _ := ManyToOne(8)
	s := runSim(t, scen, FixedRate{nicsdk.LineRate}, small, nil)
	for i, f := range s.flows {
		if f.una < 1<<20 {
			t.Errorf("flow %d: %d bytes acknowledged in 20 ms: stuck behind its window", i, f.una)
		}
	}
	if s.stats.droppedAll == 0 {
		t.Error("nothing dropped: the test did not exercise the losses it is for")
	}
	if _, err := Run(scen, FixedRate{nicsdk.LineRate}, Config{WindowBytes: 1 << 20}); err == nil {
		t.Error("a window without go-back-N ran: nothing would open it")
	}
}
