package netsim

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
)

// Config is the network and the run. Zero fields take the defaults (Defaults); a negative
// one is an error.
type Config struct {
	LinkGbps float64 // every link's rate; default 100
	PropNs   int64   // one-way propagation delay of every link; default 1000 (base RTT ≈ 4 µs)
	// HostDelayNs is each NIC's pipeline delay, once on every packet it sends (before the
	// wire) and once on every packet it receives (before it acts on it): an empty path's RTT
	// gains four. Default 0.
	HostDelayNs int64
	// TurnaroundNs is how long an RTT probe's reply takes from its arrival to the sender's CC
	// engine, as an RTT event; the flow's next probe does not leave before then. The RTT is
	// still what the reply measured on arrival. CCsim's NIC takes 2.7 µs (docs/CALIBRATION.md:
	// its reports come an RTT and at least 2.7 µs apart, whatever the rate). Default 0.
	TurnaroundNs int64
	// TXLeadNs shortens the time between a flow's bursts: each leaves TXLeadNs sooner than
	// its rate allows, but never sooner than its serialization. CCsim's NIC sends each 4 KB TX
	// event 147 ns early (docs/CALIBRATION.md), so a flow it holds at 43.8 Gb/s sends 54.6.
	// Default 0: a flow sends at its rate.
	TXLeadNs    int64
	MTU         int   // data packet size in bytes; default 4096
	ProbeBytes  int   // RTT probe, probe reply and CNP size; default 64
	BurstBytes  int   // the most data a flow sends before its RTT probe; default 16384 (4 packets)
	BurstNs     int64 // a flow's burst is what its rate sends in this time (see burstBytes); default 4000
	BufferBytes int   // each switch's shared buffer; default 5 MB
	// FatTree, when set, is the network: a two-level fat tree whose hosts are the scenario's
	// (nil: one switch).
	FatTree *FatTree
	// BufferAlpha, when set, limits each egress port's queue dynamically (Choudhury and
	// Hahne's dynamic threshold, as shared-buffer switches do): a data packet is dropped when
	// its port's queue would pass BufferAlpha × the buffer still free; one port alone then
	// holds at most α/(1+α) of the buffer. 0: the ports share the buffer drop-tail, first come.
	BufferAlpha float64
	ECN         *ECN // RED-style marking at the switch's egress queues; nil marks nothing
	// PFC makes the network lossless as RoCE's is (what DCQCN assumes): when the shared
	// buffer passes Xoff the senders' data pauses, and resumes when it drains below Xon. Xoff
	// leaves headroom for every host's burst in flight, so nothing is dropped.
	PFC bool
	// PFCPerPort, with PFC, pauses per ingress port instead, as PFC does: each switch port a
	// host sends into has a share of its switch's buffer, (buffer − every such port's headroom
	// for its data in flight) over the ports, and the host's data pauses while its bytes held
	// in that switch pass the share, and resumes when they drain 2 MTUs below it. The links
	// between switches of a fat tree have none: a spine or a far ToR may still drop.
	PFCPerPort bool

	// ClockPPM, when set, gives each host's NIC a clock of its own, off its nominal frequency
	// by an amount drawn from the seed, uniform within ±ClockPPM parts per million (IEEE
	// 802.3 allows a transmitter ±100: StandardClockPPM). The NIC's rate limiters pace, its
	// CC timers tick, its CNPs are spaced and its RTTs are read by it. Default 0: one ideal clock for every
	// host, on which flows of different hosts that start together and decide alike send in
	// lockstep for ever.
	ClockPPM float64

	Threads    int   // CC engine hardware threads per NIC; default 16
	QueueDepth int   // CC event queue per NIC; default 1024 events
	LatencyNs  int64 // decision latency of controllers that have no measured one; default 0
	// GoBackN recovers lost data as RoCE's reliable connection does: packet sequence
	// numbers, a NACK from the receiver for the first gap, go-back-N at the sender, and a
	// retransmission timeout (RTONs, RoCE's local ACK timeout; default 1 ms) for a gap no NACK
	// reports. Goodput then counts in-order data only, and NACKs reach the controller
	// (nicsdk.EvNACK). Off (the default): dropped data is lost and the rest delivered.
	GoBackN bool
	RTONs   int64
	// WindowBytes, with GoBackN, is the most data a flow has sent and not had acknowledged
	// (RoCE's outstanding requests): a flow at it waits for an acknowledgement (a probe's
	// reply carries the receiver's next expected byte). CCsim's QPs hold about 640 KiB. 0 is
	// no limit.
	WindowBytes int

	// Probe is when a flow's RTT probe leaves its NIC (ProbeWithTX by default).
	Probe Probe
	// TXEvents delivers a TX event (nicsdk.EvTX with the burst's bytes) to the sender's
	// engine for every burst a flow sends, as DOCA PCC's engine does unless the program masks
	// them: each takes an engine thread for its decision. Off by default: the engine sees RTT
	// replies, CNPs, NACKs and the controller's own timer ticks. A controller with a timer
	// (TimerNs, DCQCN's) is refused with it, as both would be EvTX.
	TXEvents bool

	DurationNs int64 // simulated time; default 20 ms
	// TraceNs, when set, samples the flows' rates and the receivers' queue every TraceNs
	// into Result.Trace (the first TraceFlows flows).
	TraceNs int64
	// Progress, if set, hears how far the run is (simulated ns of the duration) every 2^16
	// events.
	Progress func(doneNs, totalNs int64)
	WarmupNs int64 // start of the measurement window; default half the duration
	Seed     uint64
	// Actions run at simulated times within (0, DurationNs): see Action.
	Actions []Action
}

// Probe is when a flow's RTT probe leaves its NIC. Every flow keeps at most one in flight,
// and asks for the next when it decides on anything but a TX event (as rlcc_doca.h's
// rtt_req does on each RTT, CNP and NACK event and a new flow's first).
type Probe uint8

const (
	// ProbeWithTX sends the probe with the flow's next TX burst, after its data: DOCA PCC's
	// engine sends the RTT request the program asks for with the flow's next transmission
	// (the TX event that carries it is flagged RTT_REQ_SENT), and the RL-CC papers' simulator
	// sends a burst, then its RTT packet. A flow then decides at most once a burst: a slow
	// flow, once a packet (at 8192→1 with a 4 KB MTU, every 2.7 ms; with 1 KB, every 0.67
	// ms). CCsim's slow flows decide once a 4 KB TX event (the package doc).
	ProbeWithTX Probe = iota
	// ProbeAtOnce sends the probe on its own as soon as the decision that asked for it ends,
	// not waiting for the flow's data: every flow decides once an RTT whatever its rate, and
	// its probes cost each bottleneck ProbeBytes a flow an RTT (at 8192 flows, 512 KB: 42 µs
	// of a 100 Gb/s link).
	ProbeAtOnce
	// ProbeBeforeTX sends the probe with the flow's next TX burst, ahead of its data, so
	// that it does not wait behind the flow's own burst: CCsim's, as its calibration
	// measures it (docs/CALIBRATION.md: two flows settle at fair rates only this way).
	ProbeBeforeTX
)

// Probes are the Probe values by name, as nicc sim's --probe takes them.
var Probes = map[string]Probe{"tx": ProbeWithTX, "at-once": ProbeAtOnce, "tx-first": ProbeBeforeTX}

// About says what p does, for a report.
func (p Probe) About() string {
	switch p {
	case ProbeAtOnce:
		return "each flow's next RTT probe leaves on its own when the decision that asked for it ends"
	case ProbeBeforeTX:
		return "each flow's next RTT probe leaves with its next TX burst, ahead of its data"
	}
	return "each flow's next RTT probe leaves with its next TX burst, after its data"
}

func (p Probe) String() string {
	for n, v := range Probes {
		if v == p {
			return n
		}
	}
	return fmt.Sprintf("probe(%d)", uint8(p))
}

// MarshalText makes a Probe its name in JSON.
func (p Probe) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Action is something done to the run from outside at a simulated time, such as an operator
// changing a controller's parameters on the live NICs. It runs before every event of its time
// that the run scheduled (so before the decisions that start then), actions of one time in
// their order in Config.Actions; an error stops the run as a controller's does.
type Action struct {
	AtNs int64
	Do   func() error
}

// ECN is a RED-style marking profile on an egress queue's bytes: none below Kmin, all above
// Kmax, and a probability rising linearly from 0 to Pmax in between.
type ECN struct {
	KminBytes int     `json:"kmin_bytes"`
	KmaxBytes int     `json:"kmax_bytes"`
	Pmax      float64 `json:"pmax"`
}

// Defaults are the values zero Config fields take.
var Defaults = Config{LinkGbps: 100, PropNs: 1000, MTU: 4096, ProbeBytes: 64, BurstBytes: 16384, BurstNs: 4000,
	BufferBytes: 5 << 20, Threads: 16, QueueDepth: 1024, DurationNs: 20_000_000, RTONs: 1_000_000}

// StandardClockPPM is the frequency tolerance IEEE 802.3 gives an Ethernet transmitter's
// clock, ±100 ppm: nicc sim's Config.ClockPPM.
const StandardClockPPM = 100

// MaxClockPPM bounds Config.ClockPPM (1%).
const MaxClockPPM = 10_000

// The bounds of a run's Config, which keep every time, in integer picoseconds, exact and far
// from overflow: a packet's serialization is at least 1 ps and a flow's gap at its least rate
// (one fxp20 step) fits an int64.
const (
	MinLinkGbps   = 0.1    // 100 Mb/s
	MaxLinkGbps   = 10_000 // 10 Tb/s: a 64-byte probe takes 51 ps
	MaxDurationNs = 3600e9 // an hour of simulated time; a decision's latency too
	MaxPropNs     = 1e9    // a second a link, so that the base RTT fits a uint32 of ns
	MaxThreads    = 1 << 16
)

// DefaultECN is the DCQCN marking profile used when a run asks for ECN without one: Kmin
// 100 KB, Kmax 400 KB, Pmax 20%.
var DefaultECN = ECN{KminBytes: 100 << 10, KmaxBytes: 400 << 10, Pmax: 0.2}

// BaseRTTNs is the path's RTT in an empty network, in ns: a probe's four link delays and four
// serializations (what Result.BaseRTTUs reports, and what an RL-CC handler's configured
// base RTT should be in this network).
func (c Config) BaseRTTNs() (uint32, error) {
	r, err := c.resolved()
	if err != nil {
		return 0, err
	}
	return uint32(r.baseRTTPs() / 1000), nil
}

func (c Config) baseRTTPs() int64 {
	links := int64(4) // a probe's two links there and two back, on one switch or within a rack
	if c.FatTree != nil {
		links = 8 // between racks: host, ToR, spine, ToR, host, and back
	}
	return links*c.PropNs*1000 + links*c.serPs(c.ProbeBytes) + 4*c.HostDelayNs*1000
}

// resolved is c with its defaults filled in, checked.
func (c Config) resolved() (Config, error) {
	d := Defaults
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{{"propagation delay", &c.PropNs, d.PropNs}, {"duration", &c.DurationNs, d.DurationNs}, {"burst time", &c.BurstNs, d.BurstNs},
		{"retransmission timeout", &c.RTONs, d.RTONs}} {
		if *f.v < 0 {
			return c, fmt.Errorf("netsim: %s %d ns is negative", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MTU", &c.MTU, d.MTU}, {"probe size", &c.ProbeBytes, d.ProbeBytes}, {"burst", &c.BurstBytes, d.BurstBytes},
		{"buffer", &c.BufferBytes, d.BufferBytes}, {"engine threads", &c.Threads, d.Threads},
		{"CC event queue depth", &c.QueueDepth, d.QueueDepth}} {
		if *f.v < 0 {
			return c, fmt.Errorf("netsim: %s %d is negative", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.LinkGbps == 0 {
		c.LinkGbps = d.LinkGbps
	}
	if !(c.LinkGbps >= MinLinkGbps && c.LinkGbps <= MaxLinkGbps) {
		return c, fmt.Errorf("netsim: link rate %v Gb/s: want %v to %v", c.LinkGbps, MinLinkGbps, MaxLinkGbps)
	}
	if c.WindowBytes != 0 && (!c.GoBackN || c.WindowBytes < c.MTU || c.WindowBytes > 1<<30) {
		return c, fmt.Errorf("netsim: window %d bytes: want one packet (%d) to 1 GiB, with go-back-N (its acknowledgements open it)", c.WindowBytes, c.MTU)
	}
	if c.RTONs > MaxDurationNs {
		return c, fmt.Errorf("netsim: retransmission timeout %d ns: want at most %d ns", c.RTONs, int64(MaxDurationNs))
	}
	if c.HostDelayNs < 0 || c.HostDelayNs > MaxPropNs {
		return c, fmt.Errorf("netsim: host delay %d ns: want 0 to %d ns", c.HostDelayNs, int64(MaxPropNs))
	}
	if c.TurnaroundNs < 0 || c.TurnaroundNs > MaxPropNs {
		return c, fmt.Errorf("netsim: RTT turnaround %d ns: want 0 to %d ns", c.TurnaroundNs, int64(MaxPropNs))
	}
	if c.TXLeadNs < 0 || c.TXLeadNs > MaxPropNs {
		return c, fmt.Errorf("netsim: TX lead %d ns: want 0 to %d ns", c.TXLeadNs, int64(MaxPropNs))
	}
	if c.DurationNs > MaxDurationNs || c.PropNs > MaxPropNs || c.LatencyNs > MaxDurationNs {
		return c, fmt.Errorf("netsim: duration %d ns, propagation delay %d ns, decision latency %d ns: want at most %d, %d and %d ns",
			c.DurationNs, c.PropNs, c.LatencyNs, int64(MaxDurationNs), int64(MaxPropNs), int64(MaxDurationNs))
	}
	if c.Threads > MaxThreads {
		return c, fmt.Errorf("netsim: %d engine threads: want at most %d", c.Threads, MaxThreads)
	}
	if c.TraceNs < 0 {
		return c, fmt.Errorf("netsim: trace interval %d ns is negative", c.TraceNs)
	}
	if c.TraceNs > 0 && c.DurationNs/c.TraceNs > MaxTraceSamples {
		return c, fmt.Errorf("netsim: a trace every %d ns over %d ns is over %d samples", c.TraceNs, c.DurationNs, MaxTraceSamples)
	}
	if !(c.ClockPPM >= 0 && c.ClockPPM <= MaxClockPPM) {
		return c, fmt.Errorf("netsim: clock tolerance %v ppm: want 0 to %d", c.ClockPPM, MaxClockPPM)
	}
	if c.LatencyNs < 0 {
		return c, fmt.Errorf("netsim: decision latency %d ns is negative", c.LatencyNs)
	}
	if c.WarmupNs < 0 || c.WarmupNs >= c.DurationNs {
		return c, fmt.Errorf("netsim: warm-up %d ns is outside [0, the duration %d ns)", c.WarmupNs, c.DurationNs)
	}
	if c.WarmupNs == 0 {
		c.WarmupNs = c.DurationNs / 2
	}
	for _, a := range c.Actions {
		if a.AtNs <= 0 || a.AtNs >= c.DurationNs || a.Do == nil {
			return c, fmt.Errorf("netsim: an action at %d ns: want a function at a time in (0, the duration %d ns)", a.AtNs, c.DurationNs)
		}
	}
	if c.MTU > 1<<20 || c.BurstBytes > 1<<24 || c.ProbeBytes > c.MTU {
		return c, fmt.Errorf("netsim: MTU %d (at most 1 MiB), burst %d (at most 16 MiB), probe %d (at most the MTU) out of range", c.MTU, c.BurstBytes, c.ProbeBytes)
	}
	if float64(c.BurstBytes)*8000/c.LinkGbps*nicsdk.LineRate > 1<<62 {
		return c, fmt.Errorf("netsim: a burst of %d bytes at %v Gb/s: at a flow's least rate its gap would overflow the clock", c.BurstBytes, c.LinkGbps)
	}
	if c.BufferBytes < c.MTU {
		return c, fmt.Errorf("netsim: buffer %d bytes is smaller than one %d-byte packet", c.BufferBytes, c.MTU)
	}
	if t := c.FatTree; t != nil {
		if err := t.check(); err != nil {
			return c, err
		}
	}
	if c.PFCPerPort && !c.PFC {
		return c, fmt.Errorf("netsim: PFC per port takes PFC")
	}
	if c.Probe > ProbeBeforeTX {
		return c, fmt.Errorf("netsim: probe policy %d: want %s, %s or %s", uint8(c.Probe), ProbeWithTX, ProbeAtOnce, ProbeBeforeTX)
	}
	if !(c.BufferAlpha >= 0 && c.BufferAlpha <= 64) {
		return c, fmt.Errorf("netsim: buffer alpha %v: want 0 (off) to 64", c.BufferAlpha)
	}
	if e := c.ECN; e != nil && (e.KminBytes < 0 || e.KmaxBytes < e.KminBytes || !(e.Pmax >= 0 && e.Pmax <= 1)) {
		return c, fmt.Errorf("netsim: ECN profile Kmin %d, Kmax %d, Pmax %v: want 0 <= Kmin <= Kmax and Pmax in [0, 1]", e.KminBytes, e.KmaxBytes, e.Pmax)
	}
	return c, nil
}

// serPs is how long bytes take on a link, in ps.
func (c *Config) serPs(bytes int) int64 {
	return int64(math.Round(float64(bytes) * 8000 / c.LinkGbps))
}
