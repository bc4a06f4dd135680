// Package memlimit refuses a user-given count whose data would not fit nicc's memory limit,
// before anything is allocated: distill's states and trees, calibration rows, a simulation.
package memlimit

import (
	"cmp"
	"fmt"
	"time"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/termtext"
)

// Limit is the most memory a user-given count may commit nicc to (distill's states and
// trees, the int8 calibration rows): 4 GiB. It is an assumption about the machine nicc runs on
// (a laptop or CI runner with 8 GiB or more), not a property of the NIC. The estimates below
// are peak resident bytes measured with /usr/bin/time -v (Go's heap runs up to twice its live
// data between collections), rounded up.
const Limit = 4 << 30

// Peak resident bytes per item, measured on the 4-input RL-CC teacher and scaled by width.
const (
	// distillStateBase + distillStateInput·inputs a state: the labelled dataset, twice (the
	// drawn states and the train/held-out split), the trainer's row-major bins, gradients,
	// predictions, node ids, a level's summed rows and the refit's row groups (144 bytes at
	// 4 inputs; measured at nicc distill's defaults from 1M to 4M states: 135 with the
	// trainer's column-major bins and per-node row lists, 110 since they went, 2026-11-29;
	// the constants stay an upper bound).
	distillStateBase  = 72
	distillStateInput = 18
	// distillNode is a tree node: the trainer's, the model's, and its JSON when saved
	// (270 measured).
	distillNode = 300
	// distillHistCell is one histogram cell (open node × input × bin), of which the trainer
	// keeps four copies (two row ranges, the level and its parent) of 16 bytes.
	distillHistCell = 4 * 16
	// calibRowBase + calibRowInput·inputs a sampled calibration row: the row and its slice
	// header, the copy with the range corners, and nicc diff's Δy (200 bytes at 4 inputs;
	// 190 measured for diff, 180 for compile).
	calibRowBase  = 136
	calibRowInput = 16
	// calibCell is, per LSTM hidden unit and row, the |c| values quantize sorts for the cell
	// scale, with their growth (488 bytes a row for 12 units; 468 measured).
	calibCell = 24
)

// Check refuses n items (for samples n) of per bytes each beyond Limit. what
// names the work ("calibrating on 100 RL-CC states"); unit is one item ("state").
func Check(n int, per int64, what, unit string) error {
	if b := float64(n) * float64(per); b > Limit {
		return fmt.Errorf("samples %d: %s needs about %.1f GiB (%d bytes a %s), over nicc's %d GiB memory limit: at most %d %ss",
			n, what, b/(1<<30), per, unit, Limit>>30, Limit/per, unit)
	}
	return nil
}

// DistillBytes estimates the peak memory of distilling on states of width inputs with o: the
// states, the trees (at most 2^(depth+1)−1 nodes each, and no more than two per training
// state), and the histograms of the widest level.
func DistillBytes(states, inputs int, o distill.Options) float64 {
	depth := min(max(o.Depth, 1), 16)
	n := float64(states)
	nodes := min(float64(int(1)<<(depth+1)-1), 2*n)
	open := min(float64(int(1)<<(depth-1)), n)
	// Histograms have room for DefaultBins bins whatever o.Bins is.
	return n*float64(distillStateBase+distillStateInput*inputs) +
		float64(o.Trees)*nodes*distillNode + open*float64(inputs*distill.DefaultBins*distillHistCell)
}

// CheckDistill refuses a distillation whose estimate is over Limit, in one line
// that starts with where the states come from ("samples 100000000", a CSV file) and gives
// the estimate and what would fit.
func CheckDistill(from string, states, inputs int, o distill.Options) error {
	b := DistillBytes(states, inputs, o)
	if b <= Limit {
		return nil
	}
	per := distillStateBase + distillStateInput*inputs
	trees := b - float64(states)*float64(per) // the trees and histograms, at this many states
	what := fmt.Sprintf("%s: distilling %d trees of depth %d on %d states of %d inputs needs about %.1f GiB (%d bytes a state, plus %.0f MiB of trees and histograms), over nicc's %d GiB memory limit",
		from, o.Trees, o.Depth, states, inputs, b/(1<<30), per, trees/(1<<20), Limit>>30)
	if trees >= Limit {
		return fmt.Errorf("%s: fewer trees or less depth", what)
	}
	return fmt.Errorf("%s: at most %d states", what, MaxDistillStates(inputs, o))
}

// CalibRowBytes is the memory of one sampled int8 calibration row of m.
func CalibRowBytes(m *model.Model) int64 {
	b := int64(calibRowBase + calibRowInput*m.NumInputs())
	if m.Kind() == model.KindLSTM && len(m.Layers) > 1 {
		b += int64(calibCell * m.Layers[1].Out)
	}
	return b
}

// Help documents the limit and the estimates for --help.
var Help = fmt.Sprintf(`Memory: a count that would need more than %d GiB is refused before its data is allocated
(exit 2, one line with the estimate). distill, compile --target trees and a sweep's largest
configuration need about %d + %d·inputs bytes a state (%d for the 4 RL-CC inputs: about
%d states at --trees 10 --depth 4) plus %d bytes a tree node. The int8 calibration
(compile --target int8, diff --against int8) needs about %d + %d·inputs bytes a sampled
state, plus %d per LSTM hidden unit (%d for a 4-input dense network: %d states). diff
against trees or a file streams the sampled states, keeping 8 bytes of each (Δy, for the
exact percentiles), up to %d; compile's verify streams its vectors in batches.`,
	Limit>>30, distillStateBase, distillStateInput, distillStateBase+4*distillStateInput,
	MaxDistillStates(4, distill.Options{Trees: 10, Depth: 4}), distillNode,
	calibRowBase, calibRowInput, calibCell, calibRowBase+4*calibRowInput, Limit/(calibRowBase+4*calibRowInput),
	distill.MaxSamples)

// MaxDistillStates is the most states of width inputs distilling with o may use.
func MaxDistillStates(inputs int, o distill.Options) int64 {
	per := float64(distillStateBase + distillStateInput*inputs)
	big := distill.MaxSamples // enough states for the trees' and histograms' full size
	trees := DistillBytes(big, inputs, o) - float64(big)*per
	return int64(max(Limit-trees, 0) / per)
}

// SimEventLimit bounds the events one closed-loop simulation may fire (netsim.Footprint's
// upper bound): 1e11, hours at the 5 to 10 million events a second netsim runs on one core.
// A run is finite whatever its flags (netsim.Config's bounds); this refuses one that would
// not end in practice.
const SimEventLimit = 1e11

// CheckSimFootprint refuses a simulation of what (a scenario, its duration and link rate)
// whose estimate, with extra bytes kept beside it (what extraWhat says), is over Limit,
// or whose events are over SimEventLimit, in one line with the estimate, what it is based on
// and hint, what would fit.
func CheckSimFootprint(what string, cfg netsim.Config, fp netsim.Footprint, extra float64, extraWhat, hint string) error {
	mtu := cmp.Or(cfg.MTU, netsim.Defaults.MTU)
	if b := fp.Bytes + extra; b > Limit {
		msg := fmt.Sprintf("%s needs about %.1f GiB: %.0f MiB for the network (up to %.3g events in flight at %d bytes each: every data link's bandwidth-delay product in %d-byte packets, and each flow's control packets)",
			what, b/(1<<30), fp.Bytes/(1<<20), fp.InFlight, netsim.EventBytes, mtu)
		if extra > 0 {
			msg += fmt.Sprintf(" and %.1f GiB for %s", extra/(1<<30), extraWhat)
		}
		return fmt.Errorf("%s, over nicc's %d GiB memory limit: %s", msg, Limit>>30, hint)
	}
	if fp.Events > SimEventLimit {
		return fmt.Errorf("%s may fire about %.3g events (the senders' uplinks at line rate for the whole run in %d-byte packets, %d events each, and every flow's RTT probes, one a base RTT), over nicc's limit of %.0e, hours at netsim's 5 to 10 million events a second: %s",
			what, fp.Events, mtu, netsim.FiredPerPacket, float64(SimEventLimit), hint)
	}
	return nil
}

// SimWhat names a run for checkSimFootprint: its scenario, duration and link rate.
func SimWhat(scen netsim.Scenario, cfg netsim.Config) string {
	return fmt.Sprintf("%s for %s at %s Gb/s", scen.Name, time.Duration(cmp.Or(cfg.DurationNs, netsim.Defaults.DurationNs)), termtext.Num(cmp.Or(cfg.LinkGbps, netsim.Defaults.LinkGbps)))
}
