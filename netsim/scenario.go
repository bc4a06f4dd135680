package netsim

import (
	"fmt"
	"math/rand/v2"
)

// Flow is a sender → receiver data stream over the switch.
type Flow struct {
	Src, Dst int
	StartNs  int64
	Bytes    int64 // data to send; 0 sends until the run ends
}

// Scenario is hosts on one switch and the flows between them.
type Scenario struct {
	Name  string
	Hosts int
	Flows []Flow
	// Long is the long flow of a long-short scenario, whose recovery time is measured after
	// the short flows end; -1 for none.
	Long int
}

// MaxFlows bounds a scenario's flows (the papers go to 8192; all-to-all makes 2N² of them).
const MaxFlows = 1 << 17

func (s Scenario) check() error {
	if len(s.Flows) == 0 {
		return fmt.Errorf("netsim: scenario %s has no flows", s.Name)
	}
	if len(s.Flows) > MaxFlows {
		return fmt.Errorf("netsim: scenario %s has %d flows, over %d", s.Name, len(s.Flows), MaxFlows)
	}
	if s.Hosts < 1 || s.Hosts > MaxFlows {
		return fmt.Errorf("netsim: scenario %s has %d hosts, want 1 to %d", s.Name, s.Hosts, MaxFlows)
	}
	for i, f := range s.Flows {
		if f.Src < 0 || f.Src >= s.Hosts || f.Dst < 0 || f.Dst >= s.Hosts || f.StartNs < 0 || f.Bytes < 0 {
			return fmt.Errorf("netsim: scenario %s flow %d: %d → %d from %d ns, %d bytes: out of range", s.Name, i, f.Src, f.Dst, f.StartNs, f.Bytes)
		}
	}
	if s.Long >= len(s.Flows) {
		return fmt.Errorf("netsim: scenario %s: long flow %d of %d", s.Name, s.Long, len(s.Flows))
	}
	return nil
}

// Stagger delays each flow's start by its own draw, uniform in [loNs, hiNs], from seed alone
// (CCsim starts its flows in U(1, 2) ms), so that flows no longer all start at one instant.
func (s *Scenario) Stagger(loNs, hiNs int64, seed uint64) error {
	if loNs < 0 || hiNs < loNs || hiNs > MaxDurationNs {
		return fmt.Errorf("netsim: start window [%d, %d] ns: want 0 <= lo <= hi <= %d", loNs, hiNs, int64(MaxDurationNs))
	}
	rng := rand.New(rand.NewPCG(seed, 0x7374616767657221))
	for i := range s.Flows {
		s.Flows[i].StartNs += loNs + rng.Int64N(hiNs-loNs+1)
	}
	return nil
}

// manyToOneHosts is the papers' host mapping (RL-CC, Table 6 of the long version): total
// flows → sending hosts (flows per host = flows ÷ hosts). Up to 64 flows, one per host.
var manyToOneHosts = map[int]int{128: 64, 256: 32, 512: 64, 1024: 32, 2048: 64, 4096: 64, 8192: 64}

// ManyToOne is n flows from their senders into one receiver, all starting together, with
// the papers' host mapping (n ≤ 64: n hosts of one flow; 128…8192 as in the table; other
// n above 64: 64 hosts when they divide n).
func ManyToOne(n int) (Scenario, error) {
	if n < 1 || n > MaxFlows {
		return Scenario{}, fmt.Errorf("netsim: many-to-one with %d flows: want 1 to %d", n, MaxFlows)
	}
	senders, ok := manyToOneHosts[n]
	switch {
	case n <= 64:
		senders = n
	case !ok && n%64 == 0:
		senders = 64
	case !ok:
		return Scenario{}, fmt.Errorf("netsim: many-to-one with %d flows: above 64 flows, want the papers' 128, 256, ..., 8192 or a multiple of 64", n)
	}
	s := Scenario{Name: fmt.Sprintf("many-to-one %d", n), Hosts: senders + 1, Long: -1}
	for i := range n {
		s.Flows = append(s.Flows, Flow{Src: i % senders, Dst: senders})
	}
	return s, nil
}

// AllToAll is n hosts with 2n flows each; flow i of every host sends to host i mod n.
func AllToAll(n int) (Scenario, error) {
	if n < 1 || 2*n*n > MaxFlows {
		return Scenario{}, fmt.Errorf("netsim: all-to-all with %d hosts: want 1 to %d", n, 256)
	}
	s := Scenario{Name: fmt.Sprintf("all-to-all %d", n), Hosts: n, Long: -1}
	for h := range n {
		for i := range 2 * n {
			s.Flows = append(s.Flows, Flow{Src: h, Dst: i % n})
		}
	}
	return s, nil
}

// LongShort is one long flow into a receiver, joined at atNs by short flows of bytes each
// from hosts of their own; the long flow's recovery to line rate after the last short flow
// ends is measured.
func LongShort(shorts int, bytes int64, atNs int64) (Scenario, error) {
	if shorts < 1 || shorts > 1024 || bytes < 1 || atNs < 0 {
		return Scenario{}, fmt.Errorf("netsim: long-short with %d short flows of %d bytes at %d ns: want 1 to 1024 flows of at least 1 byte", shorts, bytes, atNs)
	}
	recv := shorts + 1
	s := Scenario{Name: fmt.Sprintf("long-short %d", shorts), Hosts: shorts + 2, Long: 0}
	s.Flows = append(s.Flows, Flow{Src: 0, Dst: recv})
	for i := range shorts {
		s.Flows = append(s.Flows, Flow{Src: 1 + i, Dst: recv, StartNs: atNs, Bytes: bytes})
	}
	return s, nil
}
