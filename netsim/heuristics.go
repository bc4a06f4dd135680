package netsim

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The two reference heuristics, written from their papers as rate-based NIC algorithms.
// They keep their per-flow state in the flow context, as a NIC would; they compute in float,
// being references, not firmware.

// Swift is Swift (Kumar et al., SIGCOMM 2020) as its Algorithm 1 and §3.5 give it, on a
// window of packets that the NIC paces:
//   - on each RTT sample of delay d, the target is BaseTargetNs + hops·HopNs + flow scaling,
//     α/√cwnd + β′ clamped to [0, FsRangeNs], with α and β′ such that it is FsRangeNs at
//     FsMinCwnd packets and 0 at FsMaxCwnd (many flows on a link each have a small window,
//     and a larger target);
//   - below the target the window grows by AI packets an RTT: AI/cwnd for each packet
//     acknowledged, or AI for each while the window is under one packet;
//   - above it, at most once an RTT, the window shrinks by the factor
//     max(1 − Beta·(d − target)/d, 1 − MaxMDF);
//   - the window stays within [MinCwnd, the window at line rate over the largest target], and
//     the flow sends at cwnd packets a smoothed RTT (TCP's: 1/8 of each sample): paced, as
//     Swift paces a window under one packet, and at any window here, the NIC being
//     rate-based (a window's ACK clock keeps its rate at cwnd over the RTT's average, not
//     over its last sample).
//
// The packets acknowledged since the last sample are what the flow sent since: cwnd·Δt/d. The
// hops are the network's switches on an inter-rack path (one switch: 1; a fat tree: 3), its
// MTU the packet; netsim gives them to the controller when a run starts.
type Swift struct {
	BaseTargetNs float64 // base_target: the target of a one-hop path at a large window
	HopNs        float64 // h: the target's growth per switch on the path
	FsRangeNs    float64 // fs_range: the most flow scaling adds
	FsMinCwnd    float64 // fs_min_cwnd: flow scaling adds FsRangeNs at this window (packets)
	FsMaxCwnd    float64 // fs_max_cwnd: and nothing at this one
	AI           float64 // ai: packets added an RTT below the target
	Beta         float64 // β: the decrease per unit of delay over the target
	MaxMDF       float64 // max_mdf: the largest decrease
	MinCwnd      float64 // packets

	mtuBytes   float64 // the network's, set by forNetwork
	lineBPerNs float64
	hops       float64
}

// DefaultSwift is Swift's paper parameters where they carry over (β 0.8, max_mdf 0.5,
// fs_min_cwnd 0.1, fs_max_cwnd 100 packets, a window down to 0.001 packets), with a 10 µs base
// target (this network's base RTT is about 4 µs), 1 µs a hop, a 20 µs flow-scaling range, and
// ai 0.1 packets an RTT, chosen here: at 1, 16→1 holds its queue at 31 µs against the 14 µs
// target of its fair window, at 0.1 at 10 µs.
var DefaultSwift = Swift{BaseTargetNs: 10000, HopNs: 1000, FsRangeNs: 20000, FsMinCwnd: 0.1, FsMaxCwnd: 100,
	AI: 0.1, Beta: 0.8, MaxMDF: 0.5, MinCwnd: 0.001}

// Swift's context words.
const (
	swRate     = 0 // fxp20
	swCwnd     = 1 // float32 bits, packets
	swLastDecr = 2 // ns of the last decrease, low and high words
	swLastRTT  = 4 // ns of the last sample, low and high words
	swSRTT     = 6 // float32 bits: the smoothed delay, ns
)

func (c Swift) Name() string   { return "swift" }
func (c Swift) TimerNs() int64 { return 0 }

// forNetwork is c in the network of cfg (resolved): its packet, its line rate and the
// switches on its longest path.
func (c Swift) forNetwork(cfg Config) Controller {
	c.mtuBytes, c.lineBPerNs, c.hops = float64(cfg.MTU), cfg.LinkGbps/8, 1
	if cfg.FatTree != nil {
		c.hops = 3
	}
	return c
}

func (c Swift) check() error {
	if !(c.FsMaxCwnd > c.FsMinCwnd) {
		return fmt.Errorf("netsim: Swift's flow scaling from %v to %v packets: want fs_max_cwnd above fs_min_cwnd", c.FsMinCwnd, c.FsMaxCwnd)
	}
	return nil
}

// maxCwnd is the window at line rate over the largest target.
func (c Swift) maxCwnd() float64 {
	return c.lineBPerNs * (c.BaseTargetNs + c.hops*c.HopNs + c.FsRangeNs) / c.mtuBytes
}

// target is the target delay at window cwnd, in ns.
func (c Swift) target(cwnd float64) float64 {
	alpha := c.FsRangeNs / (1/math.Sqrt(c.FsMinCwnd) - 1/math.Sqrt(c.FsMaxCwnd))
	fs := alpha/math.Sqrt(cwnd) - alpha/math.Sqrt(c.FsMaxCwnd)
	return c.BaseTargetNs + c.hops*c.HopNs + min(max(fs, 0), c.FsRangeNs)
}

func (c Swift) Init(ctx *nicsdk.FlowCtx) uint32 {
	*ctx = nicsdk.FlowCtx{}
	ctx[swRate] = nicsdk.LineRate
	// A new flow starts at line rate: the window that sends it over the base target.
	ctx[swCwnd] = math.Float32bits(float32(c.lineBPerNs * (c.BaseTargetNs + c.hops*c.HopNs) / c.mtuBytes))
	return nicsdk.LineRate
}

func (c Swift) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	if ev.Type != nicsdk.EvRTT || ev.RTTNs == 0 {
		return ctx[swRate], 0, nil
	}
	delay, now := float64(ev.RTTNs), ev.TimestampNs
	cwnd := float64(math.Float32frombits(ctx[swCwnd]))
	lastDecr := uint64(ctx[swLastDecr]) | uint64(ctx[swLastDecr+1])<<32
	lastRTT := uint64(ctx[swLastRTT]) | uint64(ctx[swLastRTT+1])<<32
	prev := cwnd
	target := c.target(cwnd)
	switch {
	case delay < target:
		acked := cwnd * float64(now-lastRTT) / delay
		if lastRTT == 0 {
			acked = 0 // the first sample: nothing to say what was acknowledged
		}
		if cwnd >= 1 {
			cwnd += c.AI / cwnd * acked
		} else {
			cwnd += c.AI * acked
		}
	case now-lastDecr >= uint64(delay):
		cwnd *= max(1-c.Beta*(delay-target)/delay, 1-c.MaxMDF)
	}
	cwnd = min(max(cwnd, c.MinCwnd), c.maxCwnd())
	if cwnd <= prev {
		ctx[swLastDecr], ctx[swLastDecr+1] = uint32(now), uint32(now>>32)
	}
	ctx[swLastRTT], ctx[swLastRTT+1] = uint32(now), uint32(now>>32)
	ctx[swCwnd] = math.Float32bits(float32(cwnd))
	srtt := float64(math.Float32frombits(ctx[swSRTT]))
	if srtt == 0 {
		srtt = delay
	}
	srtt += (delay - srtt) / 8
	ctx[swSRTT] = math.Float32bits(float32(srtt))
	rate := cwnd * c.mtuBytes / srtt / c.lineBPerNs
	ctx[swRate] = max(toFxp(min(rate, 1)), 1)
	return ctx[swRate], 0, nil
}

// toFxp is a fraction of line rate in fxp20.
func toFxp(r float64) uint32 { return uint32(math.Round(r * nicsdk.LineRate)) }

// DCQCN is DCQCN (Zhu et al., SIGCOMM 2015) at the sender (the reaction point): a CNP sets the
// target rate to the current one, cuts the current rate by α/2 and raises α; the timer
// (every TimerUs) decays α when no CNP came, and counts rate-increase stages, as does a byte
// counter every ByteCounter bytes sent; an increase is fast recovery (the current rate halfway
// to the target) for the first F stages, then additive (target + AI), then hyper (target +
// i·HAI) once both counters pass F. The switch marks ECN (Config.ECN); receivers send at most
// one CNP per flow per 50 µs.
type DCQCN struct {
	G             float64 // α gain
	TimerUs       int64   // α's update period
	IncreaseTicks uint32  // α periods per rate-increase timer stage
	ByteCounter   uint32
	F             uint32
	AI, HAI       float64 // fractions of line rate
	MinRate       float64
}

// DefaultDCQCN is the paper's parameters (g 1/256, α every 55 µs, 10 MB, F 5), the rate
// increase timer every 6 α periods (330 µs, near the 300 µs NICs default to), and the 40 Mb/s
// AI and 100 Mb/s HAI as fractions of a 100 Gb/s line.
var DefaultDCQCN = DCQCN{G: 1.0 / 256, TimerUs: 55, IncreaseTicks: 1, ByteCounter: 10 << 20, F: 5, AI: 40e6 / 100e9, HAI: 100e6 / 100e9, MinRate: 1e-4}

// DCQCN's context words.
const (
	dcRc      = 0 // current rate, fxp20
	dcRt      = 1 // target rate, fxp20
	dcAlpha   = 2 // float32 bits
	dcTStage  = 3
	dcBStage  = 4
	dcBytes   = 5 // bytes since the last byte-counter stage
	dcCNPSeen = 6 // a CNP came since the last timer
	dcTicks   = 7 // α periods since the last rate-increase stage
)

func (c DCQCN) Name() string   { return "dcqcn" }
func (c DCQCN) TimerNs() int64 { return c.TimerUs * 1000 }

func (c DCQCN) Init(ctx *nicsdk.FlowCtx) uint32 {
	*ctx = nicsdk.FlowCtx{}
	ctx[dcRc], ctx[dcRt] = nicsdk.LineRate, nicsdk.LineRate
	ctx[dcAlpha] = math.Float32bits(1)
	return nicsdk.LineRate
}

func (c DCQCN) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	rc, rt := float64(ctx[dcRc])/nicsdk.LineRate, float64(ctx[dcRt])/nicsdk.LineRate
	alpha := float64(math.Float32frombits(ctx[dcAlpha]))
	increase := false
	switch ev.Type {
	case nicsdk.EvCNP:
		rt = rc
		rc *= 1 - alpha/2
		alpha = (1-c.G)*alpha + c.G
		ctx[dcTStage], ctx[dcBStage], ctx[dcBytes], ctx[dcTicks] = 0, 0, 0, 0
		ctx[dcCNPSeen] = 1
	case nicsdk.EvTX:
		if ctx[dcCNPSeen] == 0 {
			alpha *= 1 - c.G
		}
		ctx[dcCNPSeen] = 0
		if ctx[dcTicks]++; ctx[dcTicks] >= c.IncreaseTicks {
			ctx[dcTicks] = 0
			ctx[dcTStage]++
			increase = true
		}
		if ctx[dcBytes] += ev.TxBytes; ctx[dcBytes] >= c.ByteCounter {
			ctx[dcBytes] -= c.ByteCounter
			ctx[dcBStage]++
			increase = true
		}
	default:
		return ctx[dcRc], 0, nil
	}
	if increase {
		t, b := ctx[dcTStage], ctx[dcBStage]
		switch {
		case max(t, b) < c.F:
		case min(t, b) >= c.F:
			rt += float64(min(t, b)-c.F+1) * c.HAI
		default:
			rt += c.AI
		}
		rt = min(rt, 1)
		rc = (rt + rc) / 2
	}
	ctx[dcRc], ctx[dcRt] = toFxp(min(max(rc, c.MinRate), 1)), toFxp(min(max(rt, c.MinRate), 1))
	ctx[dcAlpha] = math.Float32bits(float32(alpha))
	return ctx[dcRc], 0, nil
}

// Param is one named parameter of a reference controller (nicc sim's --swift and --dcqcn):
// its value through Get and Set, and its bounds.
type Param struct {
	Name, Doc string
	Min, Max  float64
	Integer   bool
	Get       func() float64
	Set       func(float64)
}

func floatParam(name, doc string, v *float64, lo, hi float64) Param {
	return Param{Name: name, Doc: doc, Min: lo, Max: hi, Get: func() float64 { return *v }, Set: func(x float64) { *v = x }}
}

// Params are c's parameters, set through c.
func (c *Swift) Params() []Param {
	return []Param{
		floatParam("base-target-ns", "the target delay of a one-hop path at a large window (base_target)", &c.BaseTargetNs, 1, MaxPropNs),
		floatParam("hop-ns", "the target's growth per switch on the path (h)", &c.HopNs, 0, MaxPropNs),
		floatParam("fs-range-ns", "the most flow scaling adds to the target (fs_range)", &c.FsRangeNs, 0, MaxPropNs),
		floatParam("fs-min-cwnd", "the window, in packets, at which flow scaling adds fs-range-ns", &c.FsMinCwnd, 1e-6, 1e6),
		floatParam("fs-max-cwnd", "the window at which flow scaling adds nothing; above fs-min-cwnd", &c.FsMaxCwnd, 1e-6, 1e6),
		floatParam("ai", "packets added an RTT below the target", &c.AI, 0, 1e6),
		floatParam("beta", "the decrease per unit of delay over the target (β)", &c.Beta, 0, 1),
		floatParam("max-mdf", "the largest decrease in one RTT (max_mdf)", &c.MaxMDF, 0, 1),
		floatParam("min-cwnd", "the least window, in packets", &c.MinCwnd, 1e-9, 1e6),
	}
}

// Params are c's parameters, set through c.
func (c *DCQCN) Params() []Param {
	u32 := func(name, doc string, v *uint32, lo, hi float64) Param {
		return Param{Name: name, Doc: doc, Min: lo, Max: hi, Integer: true, Get: func() float64 { return float64(*v) }, Set: func(x float64) { *v = uint32(x) }}
	}
	return []Param{
		floatParam("g", "α's gain", &c.G, 0, 1),
		{Name: "timer-us", Doc: "α's update period, µs (each a TX event)", Min: 1, Max: 1e9, Integer: true,
			Get: func() float64 { return float64(c.TimerUs) }, Set: func(x float64) { c.TimerUs = int64(x) }},
		u32("increase-ticks", "α periods per rate-increase timer stage", &c.IncreaseTicks, 1, 1<<20),
		u32("byte-counter", "bytes sent per byte-counter stage", &c.ByteCounter, 1, 1<<31),
		u32("f", "stages of fast recovery before additive increase", &c.F, 0, 1<<20),
		floatParam("ai", "additive increase, a fraction of line rate", &c.AI, 0, 1),
		floatParam("hai", "hyper increase, a fraction of line rate", &c.HAI, 0, 1),
		floatParam("min-rate", "the least rate, a fraction of line rate", &c.MinRate, 1e-9, 1),
	}
}
