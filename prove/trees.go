package prove

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/quantize"
)

// MaxCells bounds an exact proof over a tree ensemble's partition.
const MaxCells = 1 << 26

// boxAssumes is what every proof over the input box assumes.
const boxAssumes = "every input ranges independently over its declared raw range (the range the handler clamps it to; a superset of the states the handler produces), under the compile's parameters"

// treeCells decides p exactly over the cells of ir's partition: each input's range cut at its
// thresholds (x ≤ t goes left), so that in a cell every tree reaches one leaf and the
// multiplier is one value. Cells are walked with o innermost, so monotone-in-o compares each
// cell with its neighbour along o.
func (d *domain) treeCells(ir *quantize.TreeIR, p Property) (*Result, error) {
	c := check{region: d.whole()}
	if p.Kind == MonotoneInO {
		if d.oIdx < 0 {
			return nil, fmt.Errorf("the policy's layout %s has no o_t", d.in.Layout.OrDefault())
		}
	} else {
		var err error
		if c, err = d.checkOf(p); err != nil {
			return nil, err
		}
	}
	res := &Result{Assumes: boxAssumes, Domain: c.region.states(), Exact: true}
	if c.empty {
		res.Verdict, res.ProvenShare, res.Domain, res.Method = Proven, 1, 0, "vacuous: no state of the domain is in the property's region"
		return res, nil
	}
	all := make([]int, len(ir.Trees))
	for t := range all {
		all[t] = t
	}
	// starts[i] are the first raw values of input i's intervals inside the region; the
	// interval of starts[i][j] ends at starts[i][j+1]−1 (the last at the region's top).
	n := len(d.inputs)
	starts := make([][]int32, n)
	cells, counts := 1.0, make([]string, n)
	for i := range d.inputs {
		s := []int32{c.region.lo[i]}
		for _, t := range ir.FeatureThresholds(all, i) {
			if t >= c.region.lo[i] && t < c.region.hi[i] {
				s = append(s, t+1)
			}
		}
		starts[i] = s
		cells *= float64(len(s))
		counts[i] = fmt.Sprintf("%s %d", d.in.Names[i], len(s))
	}
	res.Method = fmt.Sprintf("exact: every one of %.0f cells of the ensemble's partition (intervals per input: %s), each a single leaf of every tree", cells, strings.Join(counts, ", "))
	if cells > MaxCells {
		res.Verdict, res.Method = Unknown, fmt.Sprintf("not decided: %.0f cells, over the %d an exact proof walks", cells, MaxCells)
		return res, nil
	}
	end := func(i, j int) int32 {
		if j+1 < len(starts[i]) {
			return starts[i][j+1] - 1
		}
		return c.region.hi[i]
	}
	width := func(i, j int) float64 { return float64(end(i, j)) - float64(starts[i][j]) + 1 }

	idx := make([]int, n) // the odometer over every input but o; o is walked inside
	x := make([]int32, n)
	var bad float64 // states in cells that break the property
	var first *Counterexample
	for {
		other := 1.0
		for i := range n {
			if i != d.oIdx {
				x[i] = starts[i][idx[i]]
				other *= width(i, idx[i])
			}
		}
		var prev uint32
		for j := range starts[d.oIdx] {
			x[d.oIdx] = starts[d.oIdx][j]
			m := d.m(ir.Eval(x))
			switch {
			case p.Kind == MonotoneInO && j > 0 && m > prev:
				bad += other * width(d.oIdx, j)
				if first == nil {
					lower := append([]int32(nil), x...)
					lower[d.oIdx] = x[d.oIdx] - 1
					ce, err := d.counterexample("with the other inputs fixed, the multiplier rises as o goes up one step", nil, lower, x)
					if err != nil {
						return nil, err
					}
					first = ce
				}
			case p.Kind != MonotoneInO && !c.ok(m):
				bad += other * width(d.oIdx, j)
				if first == nil {
					ce, err := d.counterexample(c.what, nil, x)
					if err != nil {
						return nil, err
					}
					first = ce
				}
			}
			prev = m
		}
		if !next(idx, starts, d.oIdx) {
			break
		}
	}
	res.ProvenShare = 1 - bad/res.Domain
	res.Verdict = Proven
	if first != nil {
		res.Verdict, res.Counterexample = Refuted, first
	}
	return res, nil
}

// next advances the odometer idx over every input but skip; false when it has wrapped.
func next(idx []int, starts [][]int32, skip int) bool {
	for i := range idx {
		if i == skip {
			continue
		}
		if idx[i]++; idx[i] < len(starts[i]) {
			return true
		}
		idx[i] = 0
	}
	return false
}
