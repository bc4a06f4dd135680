package netsim

import "fmt"

// FatTree is a two-level fat tree: ToRs of HostsPerToR hosts each, every ToR linked to every
// spine by Links parallel links at the hosts' rate. A flow between racks takes one spine and
// one link each way, chosen by a hash of the flow and its direction (ECMP); within a rack its
// ToR alone. Every switch has its own Config.BufferBytes buffer.
type FatTree struct {
	ToRs        int `json:"tors"`
	HostsPerToR int `json:"hosts_per_tor"`
	Spines      int `json:"spines"`
	Links       int `json:"links"` // between each ToR and each spine
}

// NICPaperFatTree is the NIC paper's large cluster (§6.3): four ToRs of 16 hosts and three
// spines, each ToR linked to each spine by four 100 Gb/s links (the paper's "three spines
// connected via four 100 Gbps links to four ToRs").
var NICPaperFatTree = FatTree{ToRs: 4, HostsPerToR: 16, Spines: 3, Links: 4}

// Hosts is the tree's host count.
func (t FatTree) Hosts() int { return t.ToRs * t.HostsPerToR }

func (t FatTree) check() error {
	if t.ToRs < 2 || t.HostsPerToR < 1 || t.Spines < 1 || t.Links < 1 || t.Hosts() > 4096 || t.ToRs*t.Spines*t.Links > 1<<16 {
		return fmt.Errorf("netsim: fat tree of %d ToRs of %d hosts, %d spines, %d links a ToR and spine: want at least 2 ToRs, 1 host, 1 spine and 1 link, at most 4096 hosts", t.ToRs, t.HostsPerToR, t.Spines, t.Links)
	}
	return nil
}

func (t FatTree) tor(host int) int { return host / t.HostsPerToR }

// The tree's ports, after the hosts' (port h is the ToR's port down to host h): ToR t's
// uplink l to spine s, then spine s's downlink l to ToR t.
func (t FatTree) up(hosts, tor, spine, link int) int {
	return hosts + (tor*t.Spines+spine)*t.Links + link
}

func (t FatTree) down(hosts, spine, tor, link int) int {
	return hosts + t.ToRs*t.Spines*t.Links + (spine*t.ToRs+tor)*t.Links + link
}

// ecmp is the hash of a flow and its direction (0: sender to receiver, 1: back) that picks
// its spine and links: splitmix64's finaliser over both and the seed.
func ecmp(flow int32, back bool, seed uint64) uint64 {
	x := seed ^ uint64(flow)<<1
	if back {
		x ^= 1
	}
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// setUpTree gives the ports their switches: one switch for all without a tree; with one, the
// ToRs then the spines.
func (s *sim) setUpTree() {
	t := s.cfg.FatTree
	n := s.scen.Hosts
	if t == nil {
		s.ports, s.buffers = make([]port, n), make([]int, 1)
		return
	}
	s.ports, s.buffers = make([]port, n+2*t.ToRs*t.Spines*t.Links), make([]int, t.ToRs+t.Spines)
	for h := range n {
		s.ports[h].sw = int32(t.tor(h))
	}
	for tor := range t.ToRs {
		for sp := range t.Spines {
			for l := range t.Links {
				s.ports[t.up(n, tor, sp, l)].sw = int32(tor)
				s.ports[t.down(n, sp, tor, l)].sw = int32(t.ToRs + sp)
			}
		}
	}
}

// route is the port pk takes first, leaving host src: the destination's port on one switch
// or within a rack, else its ToR's uplink to the spine its flow hashes to.
func (s *sim) route(src int, pk packet) int32 {
	t := s.cfg.FatTree
	if t == nil || t.tor(src) == t.tor(int(pk.dst)) {
		return pk.dst
	}
	h := ecmp(pk.flow, pk.kind >= pktReply, s.cfg.Seed)
	return int32(t.up(s.scen.Hosts, t.tor(src), int(h%uint64(t.Spines)), int(h/uint64(t.Spines)%uint64(t.Links))))
}

// nextPort is the port pk takes after port pi sent it, -1 at its host: from an uplink, the
// spine's downlink to the destination's ToR (its link by the same hash); from a downlink, the
// destination's port.
func (s *sim) nextPort(pi int, pk packet) int32 {
	t, n := s.cfg.FatTree, s.scen.Hosts
	switch {
	case t == nil || pi < n:
		return -1
	case pi < n+t.ToRs*t.Spines*t.Links:
		h := ecmp(pk.flow, pk.kind >= pktReply, s.cfg.Seed)
		spine := (pi - n) / t.Links % t.Spines
		return int32(t.down(n, spine, t.tor(int(pk.dst)), int(h/uint64(t.Spines*t.Links)%uint64(t.Links))))
	}
	return pk.dst
}

// FatTreeManyToOne is n flows into host 0 (on ToR 0) from the hosts of the other racks, flow
// i from the i-th of them round robin: every flow crosses the spines.
func FatTreeManyToOne(t FatTree, n int) (Scenario, error) {
	if err := t.check(); err != nil {
		return Scenario{}, err
	}
	if n < 1 || n > MaxFlows {
		return Scenario{}, fmt.Errorf("netsim: many-to-one with %d flows: want 1 to %d", n, MaxFlows)
	}
	senders := t.Hosts() - t.HostsPerToR
	s := Scenario{Name: fmt.Sprintf("fat-tree many-to-one %d", n), Hosts: t.Hosts(), Long: -1}
	for i := range n {
		s.Flows = append(s.Flows, Flow{Src: t.HostsPerToR + i%senders, Dst: 0})
	}
	return s, nil
}

// FatTreeAllToAll is every host sending one flow to every host of the other racks.
func FatTreeAllToAll(t FatTree) (Scenario, error) {
	if err := t.check(); err != nil {
		return Scenario{}, err
	}
	if n := t.Hosts() * (t.Hosts() - t.HostsPerToR); n > MaxFlows {
		return Scenario{}, fmt.Errorf("netsim: a fat tree all-to-all of %d hosts has %d flows, over %d", t.Hosts(), n, MaxFlows)
	}
	s := Scenario{Name: fmt.Sprintf("fat-tree all-to-all %d", t.Hosts()), Hosts: t.Hosts(), Long: -1}
	for a := range t.Hosts() {
		for b := range t.Hosts() {
			if t.tor(a) != t.tor(b) {
				s.Flows = append(s.Flows, Flow{Src: a, Dst: b})
			}
		}
	}
	return s, nil
}
