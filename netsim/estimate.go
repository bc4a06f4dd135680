package netsim

import (
	"math"
)

// Footprint is what a run needs at most, estimated from its scenario, its controller's timer
// and its Config before anything is allocated (Estimate), so that a caller can refuse a run
// that would not fit its memory or would not end.
type Footprint struct {
	// Bytes is the run's peak resident memory (the controller's own aside): the events in
	// flight, the switch's queues, the flows and hosts, the histograms and the trace.
	Bytes float64
	// InFlight is the most events pending at once: every link that carries data holding its
	// bandwidth-delay product (and a burst) in packets of MTU, and each flow's control packets.
	InFlight float64
	// Events is the most events the run fires: the senders' uplinks at line rate for the
	// whole run, FiredPerPacket events a packet, and each flow's RTT probes (at most one a
	// base RTT, FiredPerProbe events each), CNPs and timer ticks.
	Events float64
	// Decisions is the most RTT events (the decisions a policy is asked for): each flow at
	// most one a base RTT, since a flow keeps one probe in flight.
	Decisions float64
}

// Peak resident bytes per item, rounded up: Go's heap runs up to twice its live data between
// collections, and a growing slice holds its old array until the next one. TestEstimateBounds
// checks the event and decision bounds against real runs.
const (
	// EventBytes is one pending event: on a lane (queue.go), the event and its seq (80 bytes)
	// in a ring that grows as a slice does; on no lane, the event (72), its heap key (24) and
	// its free slot (4), in slices. /usr/bin/time -v on nicc sim many-to-one --flows 16
	// --policy swift --link-delay 20ms --mtu 1500 --duration 60ms, 2.85 million pending at
	// most (2.33 million on no lane): 636-697 MB peak before the lanes, 689-868 MB with them,
	// the spread as Go's collections fall (the live heap at the last one 344 MB, 308 MB).
	EventBytes = 400
	// queuedBytes is a packet waiting in a switch port's FIFO (32 bytes).
	queuedBytes = 128
	// flowBytes is a flow: its state (176 bytes) and its place in its host's ready heap.
	flowBytes = 640
	// hostBytes is a host and its switch port (216 bytes).
	hostBytes = 512
	// FiredPerPacket is the events a data packet fires: its host's send, its arrival at the
	// switch, the end of its serialization there and its arrival at the receiver.
	FiredPerPacket = 4
	// FiredPerProbe is the events an RTT probe fires: the probe's and its reply's three, and
	// the decision on it.
	FiredPerProbe = 7
)

// Estimate is the Footprint of running scen with cfg under a controller whose timer ticks
// every timerNs (Controller.TimerNs; 0 for none); cfg and scen are checked as Run checks them.
func Estimate(scen Scenario, cfg Config, timerNs int64) (Footprint, error) {
	c, err := cfg.resolved()
	if err != nil {
		return Footprint{}, err
	}
	if err := scen.check(); err != nil {
		return Footprint{}, err
	}
	durPs := float64(c.DurationNs) * 1000
	flows, hosts := float64(len(scen.Flows)), float64(scen.Hosts)
	senders, receivers := map[int]bool{}, map[int]bool{}
	for _, f := range scen.Flows {
		senders[f.Src], receivers[f.Dst] = true, true
	}
	bytesPerPs := c.LinkGbps / 8000
	mtu := float64(c.MTU)
	// Data in flight on a link that carries it (a sender's uplink, a receiver's downlink): its
	// propagation's worth at line rate, and a burst scheduled ahead.
	perLink := (min(float64(c.PropNs+c.HostDelayNs)*1000, durPs)*bytesPerPs+float64(c.BurstBytes))/mtu + 2
	// A flow's control packets in flight: its probe or reply, its decisions (running and
	// queued), its timer, and its CNPs (at most one each cnpIntervalPs, in flight for two
	// propagations and the longest wait in a full buffer).
	waitPs := min(2*float64(c.PropNs+c.HostDelayNs)*1000+float64(c.BufferBytes)/bytesPerPs, durPs)
	perFlow := 4.0
	if c.ECN != nil {
		perFlow += 1 + waitPs/cnpIntervalPs
	}
	fp := Footprint{InFlight: float64(len(senders)+len(receivers))*perLink + flows*perFlow}
	packets := float64(len(senders)) * durPs * bytesPerPs / mtu
	queued := min(float64(c.BufferBytes)/mtu, packets) + flows*perFlow
	fp.Bytes = fp.InFlight*EventBytes + queued*queuedBytes + flows*flowBytes + hosts*hostBytes + queueBins*8
	if scen.Long >= 0 {
		fp.Bytes += (durPs/longBinPs + 1) * 8
	}
	if c.TraceNs > 0 {
		// Each sample: its time, the deepest queue and the traced flows' rates, in slices
		// that double.
		fp.Bytes += float64(c.DurationNs/c.TraceNs+1) * float64(2+min(len(scen.Flows), TraceFlows)) * 8 * 2
	}
	base := float64(c.baseRTTPs())
	fp.Decisions = flows * (math.Floor(durPs/base) + 1)
	fp.Events = FiredPerPacket*packets + FiredPerProbe*fp.Decisions
	if c.ECN != nil {
		fp.Events += flows * durPs / cnpIntervalPs * 4 // the CNP's three and its decision
	}
	if timerNs > 0 {
		fp.Events += flows * (durPs/(float64(timerNs)*1000) + 1) * 2 // the tick and its decision
	}
	return fp, nil
}
