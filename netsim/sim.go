package netsim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nicc-dev/nicc/nicsdk"
)

// pktKind is what a packet carries.
type pktKind uint8

const (
	pktData  pktKind = iota
	pktProbe         // an RTT probe, sender → receiver
	pktReply         // the probe's reply, receiver → sender
	pktCNP           // a congestion notification, receiver → sender
	pktNACK          // a go-back-N NACK, receiver → sender: seq is the byte it expects
	pktAck           // a go-back-N ACK, receiver → sender: a finite flow's last byte, or every ackPackets under a window
)

type packet struct {
	kind pktKind
	ecn  bool
	flow int32
	size int32
	dst  int32 // the host it goes to
	sent int64 // probes and replies: when the probe left the sender
	enq  int64 // when it entered its switch queue
	// seq is a data packet's first byte in its flow; a reply's and a NACK's, the receiver's
	// next expected byte (its cumulative acknowledgement).
	seq  int64
	port int32 // the egress port it is headed for (route, nextPort)
}

// flowState is one flow as the sender's NIC and the simulator see it.
type flowState struct {
	Flow
	ctx       nicsdk.FlowCtx
	rate      uint32    // fxp20 of line rate
	next      int64     // earliest start of its next burst
	lastStart int64     // start of its last burst
	pace      burstPace // its bursts: their size and gap at its rate, and its last's size
	// Go-back-N (RoCE's reliable connection): the sender sends from nxt, and goes back to
	// una, the first byte not acknowledged, on a NACK or a retransmission timeout.
	nxt, una int64
	sentMax  int64 // the end of the furthest byte sent: bytes below it sent again are resent
	// progressAt starts the retransmission timer: when una last advanced, or the first
	// byte after it was sent. The timer is checked as the flow sends (sendBurst), and by an
	// evRTO (setTimer) at a finite flow's tail or a full window, where nothing is sent to
	// check it.
	progressAt int64
	timerSet   bool  // an evRTO of the flow is pending
	blocked    bool  // Config.WindowBytes unacknowledged: out of the ready heap until an ACK
	rcvNxt     int64 // the receiver's next expected byte: data delivered in order
	nacked     int64 // the receiver's rcvNxt when it last sent a NACK (one per gap), else -1
	inWindow   int64 // data bytes delivered in order inside the measurement window
	sinceTick  uint32
	lastCNP    int64
	finished   int64 // when its last byte arrived in order (finite flows), else -1
	started    bool
	probing    bool // an RTT probe of the flow is in flight
}

// burstPace is a flow's burst and the gap after it (burstBytes, gapPs) at a rate, computed again
// when the rate changes, and the size of its last burst.
type burstPace struct {
	rate  uint32 // the rate burst and gap are for
	burst int    // burstBytes(rate), or 0 before the first burst
	gap   int64  // gapPs of burst at rate
	last  int    // bytes of its last burst
}

type host struct {
	ready  keyHeap // its flows by next burst time, then by when they became ready (slot: the flow)
	uplink int64   // when its uplink is free
	wake   int64   // time of its pending wake (sim.wakes), or -1
	// wakeSeq is its pending wake's seq; while it is sending (run, hostSend) its wakes only
	// note their time and seq, and run sets its key in sim.wakes once it is done.
	wakeSeq uint64
	sending bool
	engine  engine
	clock   float64 // how long an interval its NIC times really takes, per nominal ps (Config.ClockPPM)
	// Config.PFCPerPort: its data held in its first switch, and whether that switch's port
	// from it has paused it.
	ingress int
	paused  bool
}

// port is a switch egress port: a FIFO of packets toward one host.
type port struct {
	fifo[packet]
	sw      int32 // its switch: its buffer is buffers[sw]
	bytes   int
	busy    bool
	txBytes int64 // bytes sent inside the window
}

// serTimes are Config.serPs of a data packet of MTU bytes and of a probe, looked up.
type serTimes struct{ mtu, probe int64 }

// sim is one run.
type sim struct {
	cfg     Config
	ctrl    Controller
	scen    Scenario
	q       eventQueue
	wakes   keyHeap // each host's next send (slot: the host), beside q
	now     int64
	hosts   []host
	ports   []port
	flows   []flowState
	buffers []int // bytes held by each switch (one without Config.FatTree)
	rng     *rand.Rand
	stats   stats
	err     error
	events  int64
	trace   *Trace

	ser serTimes

	paused    bool // PFC: the senders' data is paused
	xoff, xon int  // PFC thresholds on the shared buffer (Config.PFCPerPort: on a host's ingress)

	// lose, for tests, drops a data packet at the switch as a full buffer would.
	lose func(packet) bool
}

// ErrStopped wraps the error a controller returned, with the flow and time it happened at.
var ErrStopped = errors.New("netsim: run stopped")

// Run simulates scen under ctrl and measures it (see Result).
func Run(scen Scenario, ctrl Controller, cfg Config) (*Result, error) {
	s, err := newSim(scen, ctrl, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.result(), nil
}

func newSim(scen Scenario, ctrl Controller, cfg Config) (*sim, error) {
	c, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	if err := scen.check(); err != nil {
		return nil, err
	}
	if t := c.FatTree; t != nil && t.Hosts() != scen.Hosts {
		return nil, fmt.Errorf("netsim: scenario %s has %d hosts; the fat tree has %d", scen.Name, scen.Hosts, t.Hosts())
	}
	if c.TXEvents && ctrl.TimerNs() > 0 {
		return nil, fmt.Errorf("netsim: TX events on every burst and %s's own timer would both be EvTX: run it without TX events", ctrl.Name())
	}
	if n, ok := ctrl.(interface{ forNetwork(Config) Controller }); ok {
		ctrl = n.forNetwork(c)
	}
	if ch, ok := ctrl.(interface{ check() error }); ok {
		if err := ch.check(); err != nil {
			return nil, err
		}
	}
	s := &sim{cfg: c, ctrl: ctrl, scen: scen, hosts: make([]host, scen.Hosts),
		flows: make([]flowState, len(scen.Flows)), rng: rand.New(rand.NewPCG(c.Seed, 0x6e65747369))}
	s.wakes = keyHeap{pos: newPositions(scen.Hosts)}
	s.ser = serTimes{mtu: c.serPs(c.MTU), probe: c.serPs(c.ProbeBytes)}
	flowPos := newPositions(len(scen.Flows))
	s.setUpTree()
	s.stats.init(c, scen)
	// The clocks have a stream of their own, so that they do not move the ECN marks' draws.
	clocks := rand.New(rand.NewPCG(c.Seed, 0x636c6f636b))
	for i := range s.hosts {
		// The conversion keeps the product from fusing into a multiply-add (which some
		// builds do and others do not): the same seed gives the same clocks on every build.
		s.hosts[i].clock = 1 + float64(c.ClockPPM*1e-6*(2*clocks.Float64()-1))
		s.hosts[i].wake = -1
		s.hosts[i].ready.pos = flowPos
		s.hosts[i].engine = engine{threads: c.Threads, depth: c.QueueDepth}
	}
	for i, f := range scen.Flows {
		s.flows[i] = flowState{Flow: f, finished: -1, nacked: -1}
		s.q.push(event{at: f.StartNs * 1000, kind: evFlowStart, idx: int32(i)})
	}
	if c.PFC {
		inFlight := 2*(c.BurstBytes+c.ProbeBytes) + int(float64(c.PropNs+c.HostDelayNs)*c.LinkGbps/8)
		if c.PFCPerPort {
			ports := scen.Hosts // the ports hosts send into, on a switch
			if c.FatTree != nil {
				ports = c.FatTree.HostsPerToR
			}
			s.xoff = max((c.BufferBytes-ports*inFlight)/ports, 2*c.MTU)
		} else {
			s.xoff = max(c.BufferBytes-scen.Hosts*inFlight, c.BufferBytes/4)
		}
		s.xon = max(s.xoff-2*c.MTU, 0)
	}
	if c.TraceNs > 0 {
		s.trace = newTrace(s)
		s.q.push(event{kind: evSample})
	}
	// Pushed before the run, an action precedes every event of its time the run schedules.
	for i, a := range c.Actions {
		s.q.push(event{at: a.AtNs * 1000, kind: evAction, idx: int32(i)})
	}
	return s, nil
}

func (s *sim) inWindow() bool { return s.now >= s.cfg.WarmupNs*1000 }

func (s *sim) startFlow(i int) {
	f := &s.flows[i]
	f.started = true
	f.rate = s.ctrl.Init(&f.ctx)
	f.next = s.now
	s.ready(i)
	if p := s.ctrl.TimerNs(); p > 0 {
		s.q.pushOn(laneTimers, event{at: s.now + s.hostTime(f.Src, p*1000), kind: evTimer, idx: int32(i)})
	}
}

// ready puts flow i in its host's ready heap at its next burst time and wakes the host if it
// would otherwise sleep past it.
func (s *sim) ready(i int) {
	f := &s.flows[i]
	if f.Bytes > 0 && f.nxt >= f.Bytes {
		return
	}
	if w := int64(s.cfg.WindowBytes); w > 0 && f.nxt-f.una >= w {
		// Its window is full: an acknowledgement readies it, or the timer goes back.
		f.blocked = true
		s.setTimer(i)
		return
	}
	f.blocked = false
	f.next = max(f.next, s.now) // a go-back readies a flow whose next burst was due long ago
	h := &s.hosts[f.Src]
	h.ready.set(i, f.next, h.ready.seq)
	h.ready.seq++
	s.wakeHost(f.Src, max(f.next, h.uplink))
}

func (s *sim) wakeHost(hi int, at int64) {
	h := &s.hosts[hi]
	if h.wake >= 0 && h.wake <= at {
		return
	}
	h.wake, h.wakeSeq = at, s.q.seq
	s.q.seq++
	if !h.sending {
		s.wakes.set(hi, at, h.wakeSeq)
	}
}

// hostSend sends the burst of the ready flow that is due first, then its RTT probe when it has
// none in flight.
func (s *sim) hostSend(hi int) {
	h := &s.hosts[hi]
	h.wake = -1
	if s.paused || h.paused {
		return // PFC: the resume wakes the host
	}
	if h.ready.len() == 0 {
		return
	}
	top := h.ready.top()
	if top.at > s.now {
		s.wakeHost(hi, top.at)
		return
	}
	// The flow's key stays on top while it sends: readied again, its key moves down in
	// place; else it is removed after.
	i, seq := top.slot, top.seq
	s.sendBurst(int(i))
	if k := h.ready.top(); k.slot == i && k.seq == seq {
		h.ready.pop()
	}
	s.wakeHost(hi, h.uplink)
}

func (s *sim) sendBurst(i int) {
	f := &s.flows[i]
	h := &s.hosts[f.Src]
	switch {
	case !s.cfg.GoBackN:
	case f.una >= f.nxt:
		f.progressAt = s.now // nothing outstanding: the timer starts with this burst
	case s.now-f.progressAt >= s.rtoPs(f.Src):
		s.timeout(f)
	}
	if f.pace.burst == 0 || f.pace.rate != f.rate {
		f.pace.rate, f.pace.burst = f.rate, s.burstBytes(f.rate)
		f.pace.gap = s.gapPs(f.Src, f.pace.burst, f.rate)
	}
	burst := f.pace.burst
	if f.Bytes > 0 {
		burst = int(min(int64(burst), f.Bytes-f.nxt))
	}
	if w := int64(s.cfg.WindowBytes); w > 0 {
		burst = int(min(int64(burst), max(w-(f.nxt-f.una), int64(s.cfg.MTU))))
	}
	t := max(s.now, h.uplink)
	prop := s.cfg.PropNs * 1000
	if !f.probing && s.cfg.Probe == ProbeBeforeTX {
		t = s.probe(i, t)
	}
	for off := 0; off < burst; {
		size := min(burst-off, s.cfg.MTU)
		t += s.serPs(size)
		s.toSwitch(laneUplinks, f.Src, t+prop, packet{kind: pktData, flow: int32(i), size: int32(size), dst: int32(f.Dst), seq: f.nxt + int64(off)})
		off += size
	}
	if !f.probing {
		t = s.probe(i, t)
	}
	h.uplink = t
	s.stats.sentAll += int64(burst)
	if f.nxt < f.sentMax && s.inWindow() {
		s.stats.resent += min(int64(burst), f.sentMax-f.nxt)
	}
	f.nxt += int64(burst)
	f.sentMax = max(f.sentMax, f.nxt)
	if s.cfg.GoBackN && f.Bytes > 0 && f.nxt >= f.Bytes {
		s.setTimer(i)
	}
	f.sinceTick += uint32(burst)
	f.lastStart, f.pace.last = s.now, burst
	gap := f.pace.gap
	if burst != f.pace.burst {
		gap = s.gapPs(f.Src, burst, f.rate)
	}
	f.next = s.now + gap
	s.ready(i)
	if s.cfg.TXEvents {
		s.ccEvent(i, nicsdk.Event{Type: nicsdk.EvTX, TxBytes: uint32(burst)})
	}
}

// probe sends flow i's RTT probe on its host's uplink from time t (after whatever the uplink
// sends before) and returns when it is serialized.
func (s *sim) probe(i int, t int64) int64 {
	f := &s.flows[i]
	f.probing = true
	end := t + s.serPs(s.cfg.ProbeBytes)
	s.toSwitch(laneUplinks, f.Src, end+s.cfg.PropNs*1000, packet{kind: pktProbe, flow: int32(i), size: int32(s.cfg.ProbeBytes), dst: int32(f.Dst), sent: t})
	return end
}

// burstBytes is a flow's burst at rate: what the rate sends in Config.BurstNs, in whole
// packets, at least one and at most BurstBytes. A slow flow sends small bursts, and so still
// probes the path often.
func (s *sim) burstBytes(rate uint32) int {
	b := float64(s.cfg.BurstNs) * s.cfg.LinkGbps / 8 * float64(rate) / nicsdk.LineRate
	pkts := int(math.Ceil(b / float64(s.cfg.MTU)))
	return min(max(pkts, 1)*s.cfg.MTU, s.cfg.BurstBytes)
}

// gapPs is how long a flow of host hi at rate takes to be allowed bytes, by the host's clock:
// less Config.TXLeadNs, but not less than their serialization.
func (s *sim) gapPs(hi, bytes int, rate uint32) int64 {
	ser := s.serPs(bytes)
	return s.hostTime(hi, max(ser*nicsdk.LineRate/int64(max(rate, 1))-s.cfg.TXLeadNs*1000, ser))
}

// serPs is Config.serPs, that of an MTU's and a probe's bytes looked up.
func (s *sim) serPs(bytes int) int64 {
	if bytes == s.cfg.MTU {
		return s.ser.mtu
	}
	return s.serOtherPs(bytes)
}

func (s *sim) serOtherPs(bytes int) int64 {
	if bytes == s.cfg.ProbeBytes {
		return s.ser.probe
	}
	return s.cfg.serPs(bytes)
}

// hostTime is how long an interval of ps takes that host hi's NIC times by its own clock.
func (s *sim) hostTime(hi int, ps int64) int64 {
	return int64(float64(ps) * s.hosts[hi].clock)
}

// hostReads is what host hi's NIC reads, by its own clock, for ps that really passed.
func (s *sim) hostReads(hi int, ps int64) int64 {
	return int64(float64(ps) / s.hosts[hi].clock)
}

func (s *sim) switchArrive(pk *packet) {
	p := &s.ports[pk.port]
	buf := &s.buffers[p.sw]
	// Control packets (probes, replies, CNPs) are never dropped: switches keep headroom
	// for them. They still wait in the FIFO behind the data, so a probe measures the queue.
	if pk.kind == pktData && (*buf+int(pk.size) > s.cfg.BufferBytes || s.overThreshold(p, int(pk.size)) || s.lose != nil && s.lose(*pk)) {
		s.stats.drop(s, int(pk.size))
		return
	}
	if e := s.cfg.ECN; e != nil && pk.kind == pktData && p.bytes >= e.KminBytes {
		prob := e.Pmax
		if p.bytes >= e.KmaxBytes {
			prob = 1
		} else if e.KmaxBytes > e.KminBytes {
			prob = e.Pmax * float64(p.bytes-e.KminBytes) / float64(e.KmaxBytes-e.KminBytes)
		}
		pk.ecn = s.rng.Float64() < prob
	}
	pk.enq = s.now
	*buf += int(pk.size)
	switch {
	case pk.kind != pktData || !s.cfg.PFC:
	case s.cfg.PFCPerPort:
		if h := s.ingressHost(p, pk); h != nil {
			h.ingress += int(pk.size)
			if !h.paused && h.ingress >= s.xoff {
				h.paused = true
				s.countPause()
			}
		}
	case !s.paused && *buf >= s.xoff:
		s.paused = true
		s.countPause()
	}
	p.bytes += int(pk.size)
	p.push(*pk)
	if !p.busy {
		s.startTx(int(pk.port))
	}
}

// countPause counts a PFC pause in the window.
func (s *sim) countPause() {
	if s.inWindow() {
		s.stats.pauses++
	}
}

// ingressHost is, under Config.PFCPerPort, the sender of data packet pk held at port p when
// p's switch is the one that sender sends into: PFC counts pk against that host's ingress
// port there. Otherwise nil.
func (s *sim) ingressHost(p *port, pk *packet) *host {
	if !s.cfg.PFCPerPort || pk.kind != pktData {
		return nil
	}
	src := s.flows[pk.flow].Src
	first := int32(0)
	if t := s.cfg.FatTree; t != nil {
		first = int32(t.tor(src))
	}
	if p.sw != first {
		return nil
	}
	return &s.hosts[src]
}

// resume wakes host hi after a PFC pause, if it has a flow to send.
func (s *sim) resume(hi int) {
	if h := &s.hosts[hi]; h.ready.len() > 0 {
		s.wakeHost(hi, max(s.now, h.uplink))
	}
}

// overThreshold says port p's queue would pass its dynamic threshold with bytes more
// (Config.BufferAlpha).
func (s *sim) overThreshold(p *port, bytes int) bool {
	a := s.cfg.BufferAlpha
	return a > 0 && float64(p.bytes+bytes) > a*float64(s.cfg.BufferBytes-s.buffers[p.sw])
}

// startTx begins serializing port pi's head packet.
func (s *sim) startTx(pi int) {
	p := &s.ports[pi]
	pk := *p.front()
	p.busy = true
	if pk.kind == pktData {
		s.stats.queued(s, s.now-pk.enq)
	}
	s.q.push(event{at: s.now + s.serPs(int(pk.size)), kind: evPortFree, idx: int32(pi)})
}

func (s *sim) portFree(pi int) {
	p := &s.ports[pi]
	pk := p.pop()
	p.bytes -= int(pk.size)
	s.buffers[p.sw] -= int(pk.size)
	if h := s.ingressHost(p, &pk); h != nil {
		h.ingress -= int(pk.size)
		if h.paused && h.ingress <= s.xon {
			h.paused = false
			s.resume(s.flows[pk.flow].Src)
		}
	}
	if s.paused && slices.Max(s.buffers) <= s.xon {
		s.paused = false
		for hi := range s.hosts {
			s.resume(hi)
		}
	}
	if s.inWindow() {
		p.txBytes += int64(pk.size)
	}
	if pk.port = s.nextPort(pi, pk); pk.port < 0 {
		s.q.pushOn(laneToHosts, event{at: s.now + (s.cfg.PropNs+s.cfg.HostDelayNs)*1000, kind: evHostArrive, pkt: pk})
	} else {
		s.q.pushOn(laneToSwitches, event{at: s.now + s.cfg.PropNs*1000, kind: evSwitchArrive, pkt: pk})
	}
	p.busy = false
	if p.len() > 0 {
		s.startTx(pi)
	}
}

// ackPackets is how many data packets a responder acknowledges at once under a window
// (Config.WindowBytes): CCsim's ackCoalesce.
const ackPackets = 2

// cnpIntervalPs is the least time between two CNPs of one flow (DCQCN's 50 µs).
const cnpIntervalPs = 50_000_000

func (s *sim) hostArrive(pk *packet) {
	f := &s.flows[pk.flow]
	switch pk.kind {
	case pktData:
		s.receive(f, pk)
		if pk.ecn && s.now-f.lastCNP >= s.hostTime(f.Dst, cnpIntervalPs) {
			f.lastCNP = s.now
			s.control(packet{kind: pktCNP, flow: pk.flow, size: int32(s.cfg.ProbeBytes), dst: int32(f.Src)})
		}
	case pktProbe:
		s.control(packet{kind: pktReply, flow: pk.flow, size: int32(s.cfg.ProbeBytes), dst: int32(f.Src), sent: pk.sent, seq: f.rcvNxt})
	case pktReply:
		s.acknowledge(int(pk.flow), pk.seq)
		if s.inWindow() {
			s.stats.rttSum += float64(s.now - pk.sent)
			s.stats.rtts++
		}
		if d := s.cfg.TurnaroundNs; d > 0 {
			s.q.pushOn(laneTurnarounds, event{at: s.now + d*1000, kind: evTurnaround, pkt: *pk})
			return
		}
		s.turnaround(pk)
	case pktCNP:
		s.ccEvent(int(pk.flow), nicsdk.Event{Type: nicsdk.EvCNP})
	case pktAck:
		s.acknowledge(int(pk.flow), pk.seq)
	case pktNACK:
		if s.inWindow() {
			s.stats.nacks++
		}
		s.acknowledge(int(pk.flow), pk.seq)
		if pk.seq == f.una && pk.seq < f.nxt {
			f.nxt = pk.seq // go back: everything from the expected byte is sent again
			s.ready(int(pk.flow))
		}
		s.ccEvent(int(pk.flow), nicsdk.Event{Type: nicsdk.EvNACK})
	}
}

// turnaround hands a probe's reply to its sender's engine as an RTT event, Config.TurnaroundNs
// after it arrived, with the RTT it measured on arrival; the flow's next probe may leave.
func (s *sim) turnaround(pk *packet) {
	f := &s.flows[pk.flow]
	f.probing = false
	rtt := s.hostReads(f.Src, s.now-s.cfg.TurnaroundNs*1000-pk.sent) / 1000
	s.ccEvent(int(pk.flow), nicsdk.Event{Type: nicsdk.EvRTT, RTTNs: uint32(min(rtt, 1<<32-1))})
}

// receive is a data packet at its receiver, which keeps RoCE's go-back-N order: the expected
// bytes are delivered; a packet beyond them (one before it was dropped) is discarded, the
// first of a gap answered with a NACK for the expected byte; one already delivered (sent
// again after a go-back) is discarded.
func (s *sim) receive(f *flowState, pk *packet) {
	switch {
	case pk.seq == f.rcvNxt || !s.cfg.GoBackN:
		f.rcvNxt += int64(pk.size)
		if every := int64(ackPackets * s.cfg.MTU); s.cfg.WindowBytes > 0 && f.rcvNxt/every != (f.rcvNxt-int64(pk.size))/every {
			// A window slides on the responder's ACKs, one every ackPackets packets.
			s.control(packet{kind: pktAck, flow: pk.flow, size: int32(s.cfg.ProbeBytes), dst: int32(f.Src), seq: f.rcvNxt})
		}
		if int(pk.flow) == s.scen.Long {
			s.stats.longBins[s.now/longBinPs] += int64(pk.size)
		}
		if s.inWindow() {
			f.inWindow += int64(pk.size)
		}
		if f.Bytes > 0 && f.rcvNxt >= f.Bytes && f.finished < 0 {
			f.finished = s.now
			if s.cfg.GoBackN {
				// The responder acknowledges a message's last packet: without it the
				// sender would learn of its tail only from a probe, and none may follow.
				s.control(packet{kind: pktAck, flow: pk.flow, size: int32(s.cfg.ProbeBytes), dst: int32(f.Src), seq: f.rcvNxt})
			}
		}
	case pk.seq > f.rcvNxt:
		s.discard(pk)
		if f.nacked != f.rcvNxt {
			f.nacked = f.rcvNxt
			s.control(packet{kind: pktNACK, flow: pk.flow, size: int32(s.cfg.ProbeBytes), dst: int32(f.Src), seq: f.rcvNxt})
		}
	default:
		s.discard(pk)
	}
}

func (s *sim) discard(pk *packet) {
	s.stats.discardedAll += int64(pk.size)
	if s.inWindow() {
		s.stats.discarded += int64(pk.size)
	}
}

// acknowledge is the receiver's cumulative acknowledgement seq at flow i's sender.
func (s *sim) acknowledge(i int, seq int64) {
	f := &s.flows[i]
	if seq > f.una {
		f.una, f.progressAt = seq, s.now
		// After a go-back the receiver may already hold bytes the sender would send
		// again: it goes on from the first it lacks.
		f.nxt = max(f.nxt, seq)
		if f.blocked {
			s.ready(i)
		}
	}
}

// setTimer arms flow i's retransmission timer (an evRTO) unless it is armed: for a finite
// flow's tail, or a flow whose window is full, neither of which sends to check the timer.
func (s *sim) setTimer(i int) {
	f := &s.flows[i]
	if !f.timerSet {
		f.timerSet = true
		s.q.push(event{at: max(s.now, f.progressAt+s.rtoPs(f.Src)), kind: evRTO, idx: int32(i)})
	}
}

// rtoPs is host hi's retransmission timeout, by its clock.
func (s *sim) rtoPs(hi int) int64 { return s.hostTime(hi, s.cfg.RTONs*1000) }

// timeout goes back to the first byte not acknowledged: RoCE's local ACK timeout, for a gap
// whose NACK was answered by a retransmission that was lost too, or a tail with no later
// packet to draw a NACK.
func (s *sim) timeout(f *flowState) {
	if s.inWindow() {
		s.stats.timeouts++
	}
	f.nxt, f.progressAt = f.una, s.now
}

// rto is flow i's retransmission timer (setTimer): at a finite flow's tail, or a flow whose
// window is full, with nothing acknowledged for an RTO it goes back.
func (s *sim) rto(i int) {
	f := &s.flows[i]
	f.timerSet = false
	waiting := f.blocked || f.Bytes > 0 && f.una < f.Bytes
	switch at := f.progressAt + s.rtoPs(f.Src); {
	case !waiting:
	case s.now < at:
		f.timerSet = true
		s.q.push(event{at: at, kind: evRTO, idx: int32(i)})
	default:
		s.timeout(f)
		s.ready(i)
	}
}

// control sends a control packet (probe reply, CNP) from the receiver: it takes its
// serialization and the link's propagation, but not a turn in the receiver's data scheduler.
func (s *sim) control(pk packet) {
	s.toSwitch(laneControls, s.flows[pk.flow].Dst, s.now+s.serPs(int(pk.size))+s.cfg.PropNs*1000, pk)
}

// toSwitch has pk, sent by host src, reach its first switch at time at, after the host's
// pipeline delay, headed for the port it routes to; it is scheduled on lane l.
func (s *sim) toSwitch(l, src int, at int64, pk packet) {
	pk.port = s.route(src, pk)
	s.q.pushOn(l, event{at: at + s.cfg.HostDelayNs*1000, kind: evSwitchArrive, pkt: pk})
}

func (s *sim) timer(i int) {
	f := &s.flows[i]
	if f.Bytes > 0 && f.finished >= 0 {
		return
	}
	s.ccEvent(i, nicsdk.Event{Type: nicsdk.EvTX, TxBytes: f.sinceTick})
	f.sinceTick = 0
	s.q.pushOn(laneTimers, event{at: s.now + s.hostTime(f.Src, s.ctrl.TimerNs()*1000), kind: evTimer, idx: int32(i)})
}

// ccEvent hands a CC event of flow i to its sender NIC's engine.
func (s *sim) ccEvent(i int, ev nicsdk.Event) {
	ev.TimestampNs = uint64(s.now / 1000)
	ev.FlowID = uint32(i)
	e := &s.hosts[s.flows[i].Src].engine
	switch {
	case e.busy < e.threads:
		s.decide(i, ev)
	case e.pending.len() < e.depth:
		e.pending.push(pending{flow: int32(i), ev: ev})
	default:
		if s.inWindow() {
			s.stats.engineDropped++
		}
	}
}

// decide runs the controller on one event: the flow's context changes now, its rate when the
// decision's latency has passed.
func (s *sim) decide(i int, ev nicsdk.Event) {
	f := &s.flows[i]
	e := &s.hosts[f.Src].engine
	rate, lat, err := s.ctrl.Decide(ev, &f.ctx)
	if err != nil {
		s.err = fmt.Errorf("%w: flow %d at %.3f µs (%s event): %v", ErrStopped, i, float64(s.now)/1e6, ev.Type, err)
		return
	}
	if lat <= 0 {
		lat = s.cfg.LatencyNs * 1000
	}
	e.busy++
	if s.inWindow() {
		s.stats.decisions++
	}
	s.q.pushOn(laneDecisions, event{at: s.now + lat, kind: evDecisionDone, idx: int32(i), rate: rate,
		probe: s.cfg.Probe == ProbeAtOnce && ev.Type != nicsdk.EvTX})
}

// decisionDone ends a decision of flow i: its rate takes effect, and with probe (Config.Probe
// ProbeAtOnce) the flow's next RTT probe leaves unless one is in flight or it has finished.
func (s *sim) decisionDone(i int, rate uint32, probe bool) {
	f := &s.flows[i]
	h := &s.hosts[f.Src]
	e := &h.engine
	e.busy--
	if probe && !f.probing && f.finished < 0 {
		h.uplink = s.probe(i, max(s.now, h.uplink))
	}
	if rate != f.rate {
		f.rate = min(max(rate, 1), nicsdk.LineRate)
		// The burst in flight keeps its pace; the next is due at the new rate.
		f.next = max(s.now, f.lastStart+s.gapPs(f.Src, f.pace.last, f.rate))
		s.ready(i)
	}
	if e.pending.len() > 0 {
		p := e.pending.pop()
		s.decide(int(p.flow), p.ev)
	}
}
