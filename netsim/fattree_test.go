package netsim

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

// ECMP spreads a many-to-one's flows over every uplink of their ToRs, each flow on one path
// (its packets and its probes alike), its replies on a path of their own hash.
func TestECMPSpreadsFlowsByHash(t *testing.T) {
	ft := NICPaperFatTree
	scen, err := FatTreeManyToOne(ft, 48*8)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSim(scen, FixedRate{1}, Config{FatTree: &ft, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	perUplink := map[int32]int{}
	backDiffers := 0
	for i, f := range scen.Flows {
		data := s.route(f.Src, packet{kind: pktData, flow: int32(i), dst: int32(f.Dst)})
		if probe := s.route(f.Src, packet{kind: pktProbe, flow: int32(i), dst: int32(f.Dst)}); probe != data {
			t.Fatalf("flow %d: data on port %d, its probe on %d", i, data, probe)
		}
		if int(data) < scen.Hosts || s.ports[data].sw != int32(ft.tor(f.Src)) {
			t.Fatalf("flow %d from host %d: first port %d (switch %d) is not an uplink of its ToR", i, f.Src, data, s.ports[data].sw)
		}
		perUplink[data]++
		back := s.route(f.Dst, packet{kind: pktReply, flow: int32(i), dst: int32(f.Src)})
		if s.nextPort(int(back), packet{kind: pktReply, flow: int32(i), dst: int32(f.Src)}) < 0 {
			t.Fatalf("flow %d: the reply's uplink leads nowhere", i)
		}
		if (back-int32(scen.Hosts))/int32(ft.Links)%int32(ft.Spines) != (data-int32(scen.Hosts))/int32(ft.Links)%int32(ft.Spines) {
			backDiffers++
		}
	}
	uplinks := 3 * ft.Spines * ft.Links // the senders' three ToRs
	mean := float64(len(scen.Flows)) / float64(uplinks)
	for p, n := range perUplink {
		if float64(n) > 2.5*mean {
			t.Errorf("uplink %d carries %d flows, the mean %.1f", p, n, mean)
		}
	}
	if len(perUplink) != uplinks || backDiffers == 0 {
		t.Errorf("%d of %d uplinks used; %d replies on another spine than their flow", len(perUplink), uplinks, backDiffers)
	}
}

// 48 flows into one host across the spines, each at 1/48 of 95% of the line rate: the
// receiver's port is busy (the flows and their probes), nothing drops, and its queue holds at
// most a packet a flow (on one ideal clock the flows send in lockstep); the spines' downlinks to its ToR carry every byte; the
// RTT is the inter-rack path's (eight links); bytes are conserved.
func TestFatTreeManyToOne(t *testing.T) {
	ft := NICPaperFatTree
	scen, err := FatTreeManyToOne(ft, 48)
	if err != nil {
		t.Fatal(err)
	}
	s := runSim(t, scen, FixedRate{nicsdk.LineRate * 95 / 100 / 48}, Config{FatTree: &ft, DurationNs: 2_000_000, GoBackN: true}, nil)
	r := s.result()
	if r.DropGbps != 0 || r.Utilization < 95 || r.QueueP99Us > 48*4096*8/100e3+0.01 {
		t.Errorf("SU %.2f%%, DR %v, QL p99 %v µs", r.Utilization, r.DropGbps, r.QueueP99Us)
	}
	if r.RTTInflation < 1 || r.RTTInflation > 1+r.QueueP99Us/r.BaseRTTUs || math.Abs(r.BaseRTTUs-8.04) > 0.01 {
		t.Errorf("RTT inflation %.3f over the inter-rack base RTT %.3f µs", r.RTTInflation, r.BaseRTTUs)
	}
	var down int64
	for tor := range ft.ToRs {
		for sp := range ft.Spines {
			for l := range ft.Links {
				if tor == 0 {
					down += s.ports[ft.down(scen.Hosts, sp, 0, l)].txBytes
				} else if s.ports[ft.down(scen.Hosts, sp, tor, l)].txBytes > s.ports[0].txBytes/10 {
					t.Errorf("spine %d's downlink %d to ToR %d, which receives only replies, carried %d bytes", sp, l, tor, s.ports[ft.down(scen.Hosts, sp, tor, l)].txBytes)
				}
			}
		}
	}
	if down < s.ports[0].txBytes*99/100 || down > s.ports[0].txBytes*101/100 {
		t.Errorf("the spines sent ToR 0 %d bytes in the window, its host port %d", down, s.ports[0].txBytes)
	}
	var delivered int64
	for i := range s.flows {
		delivered += s.flows[i].rcvNxt
	}
	if got := delivered + s.stats.discardedAll + s.stats.droppedAll + s.inFlightData(); got != s.stats.sentAll {
		t.Errorf("sent %d bytes; accounted %d", s.stats.sentAll, got)
	}
}

// A flow within a rack never leaves its ToR; a fat tree whose hosts are not the scenario's,
// or that is not one, is refused.
func TestFatTreeWithinARack(t *testing.T) {
	ft := NICPaperFatTree
	scen := Scenario{Name: "rack", Hosts: ft.Hosts(), Flows: []Flow{{Src: 1, Dst: 2, Bytes: 1 << 20}}, Long: -1}
	s := runSim(t, scen, FixedRate{nicsdk.LineRate}, Config{FatTree: &ft, DurationNs: 1_000_000, WarmupNs: 1}, nil)
	for p := scen.Hosts; p < len(s.ports); p++ {
		if s.ports[p].txBytes != 0 {
			t.Errorf("port %d (switch %d) carried %d bytes of a flow within rack 0", p, s.ports[p].sw, s.ports[p].txBytes)
		}
	}
	if s.flows[0].finished < 0 {
		t.Error("the flow did not finish")
	}
	if _, err := Run(manyToOne(t, 4), FixedRate{1}, Config{FatTree: &ft}); err == nil {
		t.Error("a 5-host scenario on a 64-host tree: no error")
	}
	if _, err := FatTreeManyToOne(FatTree{ToRs: 1, HostsPerToR: 4, Spines: 1, Links: 1}, 4); err == nil {
		t.Error("a tree of one ToR: no error")
	}
}
