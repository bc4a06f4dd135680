package compiler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// Verify's policy vectors: threshold±1 on the paths that reach each split, range extremes,
// then fillers (sample rows, uniform states, near-threshold draws), and the state words of a
// stateful policy's calls.

// splitPath is one integer split with the input intervals of the path that reaches it.
type splitPath struct {
	tree, node int
	f          int
	t          int32
	lo, hi     []int32
}

// splitPaths lists every split of the IR with its path's intervals.
func splitPaths(ir *quantize.TreeIR) []splitPath {
	var out []splitPath
	if ir == nil {
		return nil // an MLP has no splits
	}
	n := len(ir.Inputs)
	type item struct {
		node   int
		lo, hi []int32
	}
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		lo, hi := make([]int32, n), make([]int32, n)
		for i, in := range ir.Inputs {
			lo[i], hi[i] = in.Min, in.Max
		}
		stack := []item{{0, lo, hi}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			nd := &tr.Nodes[it.node]
			if nd.Kind != quantize.KindSplit {
				continue
			}
			out = append(out, splitPath{tree: tr.Src, node: nd.Src, f: nd.Feature, t: nd.T, lo: it.lo, hi: it.hi})
			llo, lhi := slices.Clone(it.lo), slices.Clone(it.hi)
			lhi[nd.Feature] = min(lhi[nd.Feature], nd.T)
			rlo, rhi := slices.Clone(it.lo), slices.Clone(it.hi)
			rlo[nd.Feature] = max(rlo[nd.Feature], nd.T+1)
			stack = append(stack, item{nd.Right, rlo, rhi}, item{nd.Left, llo, lhi})
		}
	}
	return out
}

// thresholdsByFeature is each input's distinct integer thresholds, sorted.
func thresholdsByFeature(n int, splits []splitPath) [][]int32 {
	out := make([][]int32, n)
	for _, s := range splits {
		out[s.f] = append(out[s.f], s.t)
	}
	for i := range out {
		slices.Sort(out[i])
		out[i] = slices.Compact(out[i])
	}
	return out
}

func randIn(rng *rand.Rand, lo, hi int32) int32 {
	if hi <= lo {
		return lo
	}
	return int32(int64(lo) + rng.Int64N(int64(hi)-int64(lo)+1))
}

func clamp32(v int64, lo, hi int32) int32 { return int32(min(max(v, int64(lo)), int64(hi))) }

// sampleState draws a float state uniformly from the input ranges (RL-CC: o up to
// rlcc.SampleOMax, the distiller's sampler under the parameters, rather than the handler's clamp).
func (c *compilation) sampleState(rng *rand.Rand) []float64 {
	xf := make([]float64, len(c.pol.InputFormats()))
	for i, in := range c.pol.InputFormats() {
		lo, hi := in.Value(in.Min), in.Value(in.Max)
		if c.handler == HandlerRLCC && rlcc.Clamped[i] {
			hi = rlcc.SampleOMax(c.params)
		}
		xf[i] = lo + rng.Float64()*(hi-lo)
	}
	return xf
}

func (c *compilation) quantizeState(xf []float64) []int32 {
	x := make([]int32, len(xf))
	for i, v := range xf {
		x[i] = c.pol.InputFormats()[i].Quantize(v)
	}
	return x
}

// fixedVectors are the policy vectors every verify runs: every split at T-1..T+2 on a path
// that reaches it, the range extremes, and the sample rows.
func (c *compilation) fixedVectors(rng *rand.Rand, splits []splitPath) []policyVec {
	ins := c.pol.InputFormats()
	nIn := len(ins)
	var out []policyVec
	for _, s := range splits {
		for d := int64(-1); d <= 2; d++ {
			x := make([]int32, nIn)
			for g := range x {
				x[g] = randIn(rng, s.lo[g], s.hi[g])
			}
			x[s.f] = clamp32(int64(s.t)+d, s.lo[s.f], s.hi[s.f])
			out = append(out, policyVec{kind: VecThreshold, x: x,
				node: fmt.Sprintf(", tree %d node %d: %s <= %d", s.tree, s.node, ins[s.f].Name, s.t)})
		}
	}
	ends := func(i int, hi bool) int32 {
		if hi {
			return ins[i].Max
		}
		return ins[i].Min
	}
	if nIn <= 8 {
		for mask := 0; mask < 1<<nIn; mask++ {
			x := make([]int32, nIn)
			for i := range x {
				x[i] = ends(i, mask>>i&1 == 1)
			}
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	} else {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for i := range x {
				x[i] = ends(i, hi)
			}
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	}
	for i := range nIn {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for g := range x {
				x[g] = randIn(rng, ins[g].Min, ins[g].Max)
			}
			x[i] = ends(i, hi)
			out = append(out, policyVec{kind: VecExtreme, x: x})
		}
	}
	for _, row := range c.rows {
		if slices.ContainsFunc(row, math.IsNaN) {
			continue
		}
		out = append(out, policyVec{kind: VecRow, x: c.quantizeState(row), fl: row})
	}
	return out
}

// filler draws the rest of the policy vectors, alternately a sampled float state and a
// near-threshold one (each input near a random threshold of its own, or uniform).
type filler struct {
	c   *compilation
	rng *rand.Rand
	thr [][]int32
	k   int
}

func (c *compilation) newFiller(rng *rand.Rand, splits []splitPath) *filler {
	return &filler{c: c, rng: rng, thr: thresholdsByFeature(len(c.pol.InputFormats()), splits)}
}

func (f *filler) next() policyVec {
	f.k++
	if f.k%2 == 1 {
		xf := f.c.sampleState(f.rng)
		return policyVec{kind: VecSampled, x: f.c.quantizeState(xf), fl: xf}
	}
	ins := f.c.pol.InputFormats()
	x := make([]int32, len(ins))
	for i, in := range ins {
		if ts := f.thr[i]; len(ts) > 0 && f.rng.IntN(4) != 0 {
			x[i] = clamp32(int64(ts[f.rng.IntN(len(ts))])+f.rng.Int64N(9)-4, in.Min, in.Max)
		} else {
			x[i] = randIn(f.rng, in.Min, in.Max)
		}
	}
	return policyVec{kind: VecNearThreshold, x: x}
}

// stateGen draws the state words of a stateful policy's vectors: runs of 32 calls, each run
// starting from zeroed words (a new flow) or random ones (any bytes are a valid state), the
// other calls from the state the golden model left after the previous one.
type stateGen struct {
	c     *compilation
	rng   *rand.Rand
	carry []uint32
	k     int
}

func (c *compilation) newStates(rng *rand.Rand) *stateGen { return &stateGen{c: c, rng: rng} }

// next is the state for a call on x (nil for a stateless policy).
func (g *stateGen) next(x []int32) []uint32 {
	w := g.c.pol.StateWords()
	if w == 0 {
		return nil
	}
	st := slices.Clone(g.carry)
	if g.k%32 == 0 {
		st = make([]uint32, w)
		if g.k%64 == 32 {
			for i := range st {
				st[i] = g.rng.Uint32()
			}
		}
	}
	g.k++
	g.carry = slices.Clone(st)
	g.c.pol.Call(x, g.carry)
	return st
}
