package prove

import (
	"fmt"
	"math"
	"strings"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// domain is the handler's input domain for one compile: every policy input over its declared
// raw range (the range the handler clamps it to), on its grid.
type domain struct {
	in     Input
	inputs []quantize.Input
	oIdx   int     // o_t's index among the inputs
	tRaw   float64 // T = target·scale in o's raw units
	out    nicsdk.PolicyOut
}

func newDomain(in Input) (*domain, error) {
	d := &domain{in: in, inputs: in.Policy.InputFormats(), oIdx: -1, out: quantize.Out(in.Policy)}
	for i, s := range in.Layout.OrDefault().Slots() {
		if s.Feature == nicsdk.FeatObs && s.Lag == 0 {
			d.oIdx = i
		}
	}
	if len(in.Layout.OrDefault().Slots()) != len(d.inputs) {
		return nil, fmt.Errorf("prove: layout %s has %d inputs, the policy %d", in.Layout.OrDefault(), len(in.Layout.OrDefault().Slots()), len(d.inputs))
	}
	if d.oIdx >= 0 {
		d.tRaw = math.Ldexp(float64(-nicsdk.ObsMin(in.Params)), d.inputs[d.oIdx].Frac-16)
	}
	return d, nil
}

// text says what the domain is: each input's range.
func (d *domain) text() string {
	var parts []string
	for i, in := range d.inputs {
		parts = append(parts, fmt.Sprintf("%s in [%s, %s] (Q%d)", d.in.Names[i], fmtReal(in.Value(in.Min)), fmtReal(in.Value(in.Max)), in.Frac))
	}
	t := "n/a"
	if d.oIdx >= 0 {
		t = fmtReal(math.Ldexp(d.tRaw, -d.inputs[d.oIdx].Frac))
	}
	return fmt.Sprintf("%s, each over its grid, independently; T = target·scale = %s", strings.Join(parts, ", "), t)
}

// box is a set of raw input vectors: input i in [lo[i], hi[i]].
type box struct{ lo, hi []int32 }

// whole is the domain's box.
func (d *domain) whole() box {
	b := box{lo: make([]int32, len(d.inputs)), hi: make([]int32, len(d.inputs))}
	for i, in := range d.inputs {
		b.lo[i], b.hi[i] = in.Min, in.Max
	}
	return b
}

func (b box) clone() box {
	return box{lo: append([]int32(nil), b.lo...), hi: append([]int32(nil), b.hi...)}
}

// states is how many raw vectors b holds.
func (b box) states() float64 {
	n := 1.0
	for i := range b.lo {
		n *= float64(b.hi[i]) - float64(b.lo[i]) + 1
	}
	return n
}

// check is a property on the multiplier over a region of the domain.
type check struct {
	region box
	empty  bool                // no state is in the region
	ok     func(m uint32) bool // the property at one state
	// worse orders multipliers' ranges by how likely they hold a counterexample
	worse func(lo, hi uint32) int64
	what  string // what it says, for a counterexample
}

// checkOf is p (cuts-when-congested, raises-when-idle or bounded-step) as a check.
func (d *domain) checkOf(p Property) (check, error) {
	c := check{region: d.whole()}
	switch p.Kind {
	case CutsWhenCongested, RaisesWhenIdle:
		if d.oIdx < 0 {
			return c, fmt.Errorf("the policy's layout %s has no o_t", d.in.Layout.OrDefault())
		}
		in := d.inputs[d.oIdx]
		if p.Kind == CutsWhenCongested {
			at := math.Ceil(p.K * d.tRaw)
			c.region.lo[d.oIdx] = int32(max(at, float64(in.Min)))
			c.empty = at > float64(in.Max)
			c.ok = func(m uint32) bool { return m <= nicsdk.Q16One }
			c.worse = func(_, hi uint32) int64 { return int64(hi) }
			c.what = fmt.Sprintf("o ≥ %s·T = %s, yet the multiplier is over 1", fmtReal(p.K), fmtReal(in.Value(c.region.lo[d.oIdx])))
		} else {
			at := math.Floor(-p.K * d.tRaw)
			c.region.hi[d.oIdx] = int32(min(at, float64(in.Max)))
			c.empty = at < float64(in.Min)
			c.ok = func(m uint32) bool { return m >= nicsdk.Q16One }
			c.worse = func(lo, _ uint32) int64 { return -int64(lo) }
			c.what = fmt.Sprintf("o ≤ −%s·T = %s, yet the multiplier is under 1", fmtReal(p.K), fmtReal(in.Value(c.region.hi[d.oIdx])))
		}
	case BoundedStep:
		lo, hi := uint32(math.Ceil(p.Lo*nicsdk.Q16One)), uint32(math.Floor(p.Hi*nicsdk.Q16One))
		c.ok = func(m uint32) bool { return lo <= m && m <= hi }
		c.worse = func(mlo, mhi uint32) int64 { return max(int64(mhi)-int64(hi), int64(lo)-int64(mlo)) }
		c.what = fmt.Sprintf("the multiplier is outside [%s, %s]", fmtReal(p.Lo), fmtReal(p.Hi))
	default:
		return c, fmt.Errorf("no check for %s", p.Kind)
	}
	return c, nil
}

// m is the handler's multiplier for what the policy returned.
func (d *domain) m(v int32) uint32 {
	if d.out == nicsdk.OutM {
		return uint32(min(max(v, nicsdk.AMin), nicsdk.AMax))
	}
	return nicsdk.Multiplier(v)
}

// golden is the multiplier at x, from state (a copy is used; nil: zeros).
func (d *domain) golden(x []int32, state []uint32) uint32 {
	s := make([]uint32, d.in.Policy.StateWords())
	copy(s, state)
	return d.m(d.in.Policy.Call(x, s))
}

// counterexample makes rows of the raw vectors xs from state, runs each on the golden model
// and the firmware, and fails when the firmware disagrees: then the compile is not what
// verify passed. A recurrent policy's rows run from a new flow's memory, each on its own
// (Separate).
func (d *domain) counterexample(why string, state []uint32, xs ...[]int32) (*Counterexample, error) {
	c := &Counterexample{Names: d.in.Names, Why: why, Separate: d.in.Policy.StateWords() > 0 && len(xs) > 1}
	for _, x := range xs {
		row := make([]float64, len(x))
		for i, v := range x {
			row[i] = d.inputs[i].Value(v)
		}
		c.Rows, c.Raw = append(c.Rows, row), append(c.Raw, append([]int32(nil), x...))
		g := d.golden(x, state)
		c.Golden = append(c.Golden, g)
		if d.in.Firmware == nil {
			continue
		}
		s := make([]uint32, d.in.Policy.StateWords())
		copy(s, state)
		v, err := d.in.Firmware(x, s)
		if err != nil {
			return nil, fmt.Errorf("the firmware on the counterexample %v: %w", row, err)
		}
		if f := d.m(v); f != g {
			return nil, fmt.Errorf("at %v the firmware's multiplier is %d, the golden model's %d (Q16): the compile is not what verify passed", row, f, g)
		}
		c.Firmware = append(c.Firmware, d.m(v))
	}
	return c, nil
}

// decide decides p.
func (d *domain) decide(p Property) (*Result, error) {
	if p.Kind == RateInRange {
		return d.rateInRange()
	}
	switch ir := d.in.Policy.(type) {
	case *quantize.TreeIR:
		return d.treeCells(ir, p)
	case *quantize.MLPIR:
		if p.Kind == MonotoneInO {
			return d.searchMonotone()
		}
		return d.branchAndBound(ir, p)
	}
	if ir, ok := d.in.Policy.(*quantize.LSTMIR); ok && p.Kind != MonotoneInO {
		return d.lstmProof(ir, p)
	}
	if p.Kind == MonotoneInO {
		return d.searchMonotone()
	}
	return d.searchSequences(p)
}

// sequence is a counterexample of a recurrent policy: the rows xs as one flow's consecutive
// decisions from a new flow's memory, on the golden model and on the firmware, each keeping
// its memory across the rows.
func (d *domain) sequence(why string, xs [][]int32) (*Counterexample, error) {
	c := &Counterexample{Names: d.in.Names, Why: why, Sequence: true}
	gs, fs := make([]uint32, d.in.Policy.StateWords()), make([]uint32, d.in.Policy.StateWords())
	for k, x := range xs {
		row := make([]float64, len(x))
		for i, v := range x {
			row[i] = d.inputs[i].Value(v)
		}
		c.Rows, c.Raw = append(c.Rows, row), append(c.Raw, append([]int32(nil), x...))
		g := d.m(d.in.Policy.Call(x, gs))
		c.Golden = append(c.Golden, g)
		if d.in.Firmware == nil {
			continue
		}
		v, err := d.in.Firmware(x, fs)
		if err != nil {
			return nil, fmt.Errorf("the firmware on row %d of the counterexample: %w", k+1, err)
		}
		if f := d.m(v); f != g {
			return nil, fmt.Errorf("at row %d of the counterexample %v the firmware's multiplier is %d, the golden model's %d (Q16): the compile is not what verify passed", k+1, row, f, g)
		}
		c.Firmware = append(c.Firmware, d.m(v))
	}
	return c, nil
}

func fmtReal(v float64) string { return fmt.Sprintf("%.6g", v) }
