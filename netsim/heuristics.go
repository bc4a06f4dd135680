package netsim

import (
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The two reference heuristics, written from their papers as rate-based NIC algorithms.
// They keep their per-flow state in the flow context, as a NIC would; they compute in float,
// being references, not firmware.

// Swift is Swift's delay-based AIMD (Kumar et al., SIGCOMM 2020) on rates: below the target
// delay the rate grows by AI at each RTT sample; above it, at most once per RTT, it shrinks
// by β·(delay − target)/delay, by at most MaxMD. The target is TargetNs, the fabric's base
// target (configured, as in Swift: a flow cannot learn its base RTT from samples taken in a
// queue), plus flow scaling: FsRangeNs·(1/√r − 1)/(1/√MinRate − 1) for a rate r (fraction of
// line rate), which gives slow flows (many flows sharing a link) a larger target.
type Swift struct {
	TargetNs  float64 // the target delay at line rate
	FsRangeNs float64 // flow scaling's range
	AI        float64 // additive increase per RTT sample, fraction of line rate
	Beta      float64 // multiplicative decrease factor
	MaxMD     float64 // largest decrease per RTT
	MinRate   float64 // fraction of line rate
}

// DefaultSwift is Swift's paper defaults where they carry over (β 0.8, max MD 0.5), with a
// 10 µs base target (the default network's base RTT is about 4.7 µs) and a 20 µs
// flow-scaling range.
var DefaultSwift = Swift{TargetNs: 10000, FsRangeNs: 20000, AI: 0.002, Beta: 0.8, MaxMD: 0.5, MinRate: 1e-4}

// Swift's context words.
const (
	swRate     = 0 // fxp20
	swLastDecr = 1 // ns of the last decrease, low and high words
)

func (c Swift) Name() string   { return "swift" }
func (c Swift) TimerNs() int64 { return 0 }

func (c Swift) Init(ctx *nicsdk.FlowCtx) uint32 {
	*ctx = nicsdk.FlowCtx{}
	ctx[swRate] = nicsdk.LineRate
	return nicsdk.LineRate
}

func (c Swift) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	rate := float64(ctx[swRate]) / nicsdk.LineRate
	if ev.Type != nicsdk.EvRTT || ev.RTTNs == 0 {
		return ctx[swRate], 0, nil
	}
	delay := float64(ev.RTTNs)
	fs := c.FsRangeNs * (1/math.Sqrt(rate) - 1) / (1/math.Sqrt(c.MinRate) - 1)
	target := c.TargetNs + min(max(fs, 0), c.FsRangeNs)
	now := ev.TimestampNs
	last := uint64(ctx[swLastDecr]) | uint64(ctx[swLastDecr+1])<<32
	switch {
	case delay < target:
		rate += c.AI
	case now-last >= uint64(delay):
		rate *= max(1-c.Beta*(delay-target)/delay, 1-c.MaxMD)
		ctx[swLastDecr], ctx[swLastDecr+1] = uint32(now), uint32(now>>32)
	}
	ctx[swRate] = toFxp(min(max(rate, c.MinRate), 1))
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
