// Package simfw is a compile as netsim's controller: its firmware run in fwsim for every
// decision, each taking the cycles it ran at the core's clock, or its golden model.
package simfw

import (
	"cmp"
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/target"
)

// Golden is c's golden model in nicsdk's runtime, under the parameters p.
func Golden(cp *compiler.Compiled, p nicsdk.Params) *netsim.RLCC {
	pol := cp.Policy()
	return &netsim.RLCC{Label: "golden " + cp.Model().Name, Params: p, Layout: cp.Layout(), Words: pol.StateWords(),
		Out: quantize.Out(pol), Policy: pol.Call}
}

// Controller runs a compile's program in fwsim, through its target's engine, for
// every decision on the flow's 48-byte context; a decision takes the cycles it ran at the
// core's clock, times the threads sharing its pipeline (or a fixed latency).
type Controller struct {
	Label  string // its name in reports
	entry  string // the entry each decision calls
	engine target.Engine
	params nicsdk.Params
	layout nicsdk.Layout // the window the firmware's handler feeds (a new flow's top words)
	time   decisionTime

	lastCycles uint64 // the last decision's fwsim cycles
}

// decisionTime is how long a firmware decision takes in the loop (see Controller).
type decisionTime struct {
	psPerCycle float64 // × threads sharing
	fixedPs    int64
	text       string
	seen       Cycles
	sum        uint64
}

// Cycles are the fwsim cycles of the firmware's decisions over the whole run, and the
// time they take at the core's clock × the threads sharing the pipeline (the latency the loop
// gives them unless --latency fixes it).
type Cycles struct {
	Decisions int64   `json:"decisions"`
	Mean      float64 `json:"mean"`
	Max       uint64  `json:"max"`
	MeanNs    float64 `json:"mean_ns"`
	MaxNs     float64 `json:"max_ns"`
}

func newDecisionTime(prof *fwsim.Profile, threads int, latencyNs int64) decisionTime {
	sharing := cmp.Or(threads, prof.Threads)
	d := decisionTime{psPerCycle: 1e12 / prof.ClockHz * float64(sharing), fixedPs: latencyNs * 1000,
		text: fmt.Sprintf("measured: each decision's fwsim cycles at %s × %d thread(s) sharing the pipeline (%s)", budget.ClockText(prof.ClockHz), sharing, prof.Name)}
	if latencyNs > 0 {
		d.text = LatencyText(latencyNs)
	}
	return d
}

// ps is the latency of a decision that ran cycles, which it counts.
func (d *decisionTime) ps(cycles uint64) int64 {
	d.seen.Decisions++
	d.sum += cycles
	d.seen.Max = max(d.seen.Max, cycles)
	if d.fixedPs > 0 {
		return d.fixedPs
	}
	return int64(math.Ceil(float64(cycles) * d.psPerCycle))
}

// LastCycles are the fwsim cycles of the firmware's last decision; Cycles all of them so far.
func (f *Controller) LastCycles() uint64 { return f.lastCycles }
func (f *Controller) Cycles() *Cycles    { return f.time.cycles() }

// Engine is the target's engine the program runs in; Entry the entry each decision calls;
// LatencyAbout says how long a decision takes in the loop.
func (f *Controller) Engine() target.Engine { return f.engine }
func (f *Controller) Entry() string         { return f.entry }
func (f *Controller) LatencyAbout() string  { return f.time.text }

// cycles is the decisions' cycles so far.
func (d *decisionTime) cycles() *Cycles {
	c := d.seen
	if c.Decisions > 0 {
		c.Mean = float64(d.sum) / float64(c.Decisions)
	}
	c.MeanNs, c.MaxNs = c.Mean*d.psPerCycle/1000, float64(c.Max)*d.psPerCycle/1000
	return &c
}

// Open runs target t's program elf on core, its flows started under p and the window layout;
// threads share the core's pipeline (0: the core's own count), and latencyNs, when set, is
// every decision's latency instead of its cycles'.
func Open(t target.Target, elf, label string, layout nicsdk.Layout, p nicsdk.Params, core string, threads int, latencyNs int64) (*Controller, error) {
	e, err := t.Open(elf, core)
	if err != nil {
		return nil, err
	}
	return &Controller{Label: label, entry: t.Entry(), engine: e, params: p, layout: layout,
		time: newDecisionTime(e.Profile(), threads, latencyNs)}, nil
}

func (f *Controller) Name() string   { return f.Label }
func (f *Controller) TimerNs() int64 { return 0 }

// Init is a new flow's context as the target hands it to the program, and its first rate.
func (f *Controller) Init(ctx *nicsdk.FlowCtx) uint32 {
	return f.engine.Start(ctx, f.params, f.layout)
}

func (f *Controller) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	rate, cycles, err := f.engine.Decide(ev, ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", f.entry, err)
	}
	if err := checkRate(f.entry, rate, f.params); err != nil {
		return 0, 0, err
	}
	f.lastCycles = cycles
	return rate, f.time.ps(cycles), nil
}

// checkRate is the firmware's fault when entry returned a rate outside [the compiled min
// rate, line rate]: the handler clamps every rate it returns into that range, so a rate
// beyond it stops the run as a trap does.
func checkRate(entry string, rate uint32, p nicsdk.Params) error {
	if rate < p.MinRate || rate > nicsdk.LineRate {
		return fmt.Errorf("%s returned rate %d (%#x), outside [the min rate %d, line rate %d] in fxp20: the firmware's fault", entry, rate, rate, p.MinRate, nicsdk.LineRate)
	}
	return nil
}

// LatencyText says what a fixed decision latency of ns is (0: none).
func LatencyText(ns int64) string {
	if ns == 0 {
		return "none: decisions take no time"
	}
	return fmt.Sprintf("%d ns each (--latency)", ns)
}
