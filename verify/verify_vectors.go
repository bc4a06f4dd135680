package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
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

// splitIter yields every split of a tree IR, tree by tree, each tree's in preorder (a split,
// then its left subtree, then its right), with its path's intervals. It holds one path at a
// time, not a list of every split (31 trees of depth 16 have 2 million): a split's lo and hi
// are valid until the next call of next.
type splitIter struct {
	ir     *quantize.TreeIR
	tree   int
	lo, hi []int32
	stack  []splitFrame
}

// splitFrame is a split on the path being walked: the bound its current side narrowed, saved,
// and which side it is on (0: none yet, 1: left, 2: right).
type splitFrame struct {
	node  int
	saved int32
	side  int
}

// splits iterates over the splits of ir (none for a network, ir nil).
func splits(ir *quantize.TreeIR) *splitIter {
	it := &splitIter{ir: ir, tree: -1}
	if ir != nil {
		it.lo, it.hi = make([]int32, len(ir.Inputs)), make([]int32, len(ir.Inputs))
	}
	return it
}

// next is the next split, or false after the last.
func (it *splitIter) next() (splitPath, bool) {
	if it.ir == nil {
		return splitPath{}, false
	}
	for {
		if len(it.stack) == 0 {
			if it.tree++; it.tree >= len(it.ir.Trees) {
				return splitPath{}, false
			}
			for i, in := range it.ir.Inputs {
				it.lo[i], it.hi[i] = in.Min, in.Max
			}
			if s, ok := it.enter(0); ok {
				return s, true
			}
			continue
		}
		tr := &it.ir.Trees[it.tree]
		fr := &it.stack[len(it.stack)-1]
		nd := &tr.Nodes[fr.node]
		f := nd.Feature
		switch fr.side {
		case 0: // go left: x <= T
			fr.side, fr.saved = 1, it.hi[f]
			it.hi[f] = min(it.hi[f], nd.T)
			if s, ok := it.enter(nd.Left); ok {
				return s, true
			}
		case 1: // go right: x > T
			it.hi[f] = fr.saved
			fr.side, fr.saved = 2, it.lo[f]
			it.lo[f] = max(it.lo[f], nd.T+1)
			if s, ok := it.enter(nd.Right); ok {
				return s, true
			}
		default:
			it.lo[f] = fr.saved
			it.stack = it.stack[:len(it.stack)-1]
		}
	}
}

// enter visits node i of the current tree: a split is pushed and returned.
func (it *splitIter) enter(i int) (splitPath, bool) {
	tr := &it.ir.Trees[it.tree]
	nd := &tr.Nodes[i]
	if nd.Kind != quantize.KindSplit {
		return splitPath{}, false
	}
	it.stack = append(it.stack, splitFrame{node: i})
	return splitPath{tree: tr.Src, node: nd.Src, f: nd.Feature, t: nd.T, lo: it.lo, hi: it.hi}, true
}

// countSplits is the number of splits of ir (those reachable from a root, as splits yields).
func countSplits(ir *quantize.TreeIR) int {
	n := 0
	for it := splits(ir); ; n++ {
		if _, ok := it.next(); !ok {
			return n
		}
	}
}

// SplitsPerFeature is how many splits of ir (those reachable from a root) test each of its
// inputs.
func SplitsPerFeature(ir *quantize.TreeIR) []int {
	n := make([]int, len(ir.Inputs))
	for it := splits(ir); ; {
		s, ok := it.next()
		if !ok {
			return n
		}
		n[s.f]++
	}
}

// ThresholdsByFeature is each of n inputs' distinct integer thresholds in ir, sorted.
func ThresholdsByFeature(n int, ir *quantize.TreeIR) [][]int32 {
	out := make([][]int32, n)
	for it := splits(ir); ; {
		s, ok := it.next()
		if !ok {
			break
		}
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
func (c *Input) sampleState(rng *rand.Rand) []float64 {
	xf := make([]float64, len(c.Policy.InputFormats()))
	var clamped []bool
	if c.Handler == artifact.HandlerRLCC {
		clamped = rlcc.Clamped(c.Layout)
	}
	for i, in := range c.Policy.InputFormats() {
		lo, hi := in.Value(in.Min), in.Value(in.Max)
		if clamped != nil && clamped[i] {
			hi = rlcc.SampleOMax(c.Params)
		}
		xf[i] = lo + rng.Float64()*(hi-lo)
	}
	return xf
}

// fixedGen yields the policy vectors every verify runs, in this order: every split at
// T-1..T+2 on a path that reaches it (drawn as they are taken, one split at a time, so that
// Run's memory does not grow with the splits), then the range extremes and the sample rows
// (drawn once the splits are done, from the same generator).
type fixedGen struct {
	c      *Input
	rng    *rand.Rand
	splits *splitIter
	cur    splitPath
	d      int64 // the next offset from cur's threshold; 3: take the next split
	rest   []policyVec
	done   bool
}

func (c *Input) newFixed(rng *rand.Rand, ir *quantize.TreeIR) *fixedGen {
	return &fixedGen{c: c, rng: rng, splits: splits(ir), d: 3}
}

// fixedCount is how many vectors a fixedGen over ir yields.
func (c *Input) fixedCount(ir *quantize.TreeIR) int {
	nIn := len(c.Policy.InputFormats())
	ext := 2
	if nIn <= 8 {
		ext = 1 << nIn
	}
	rows := 0
	for _, row := range c.Rows {
		if !slices.ContainsFunc(row, math.IsNaN) {
			rows++
		}
	}
	return 4*countSplits(ir) + ext + 2*nIn + rows
}

// next is the next fixed vector, or false after the last.
func (g *fixedGen) next() (policyVec, bool) {
	ins := g.c.Policy.InputFormats()
	if !g.done {
		if g.d > 2 {
			s, ok := g.splits.next()
			if ok {
				g.cur, g.d = s, -1
			} else {
				g.done, g.rest = true, g.c.extremeVectors(g.rng)
			}
		}
		if !g.done {
			s := g.cur
			x := make([]int32, len(ins))
			for i := range x {
				x[i] = randIn(g.rng, s.lo[i], s.hi[i])
			}
			x[s.f] = clamp32(int64(s.t)+g.d, s.lo[s.f], s.hi[s.f])
			g.d++
			return policyVec{kind: artifact.VecThreshold, x: x,
				node: fmt.Sprintf(", tree %d node %d: %s <= %d", s.tree, s.node, ins[s.f].Name, s.t)}, true
		}
	}
	if len(g.rest) == 0 {
		return policyVec{}, false
	}
	p := g.rest[0]
	g.rest = g.rest[1:]
	return p, true
}

// extremeVectors are the range extremes and the sample rows.
func (c *Input) extremeVectors(rng *rand.Rand) []policyVec {
	ins := c.Policy.InputFormats()
	nIn := len(ins)
	var out []policyVec
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
			out = append(out, policyVec{kind: artifact.VecExtreme, x: x})
		}
	} else {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for i := range x {
				x[i] = ends(i, hi)
			}
			out = append(out, policyVec{kind: artifact.VecExtreme, x: x})
		}
	}
	for i := range nIn {
		for _, hi := range []bool{false, true} {
			x := make([]int32, nIn)
			for g := range x {
				x[g] = randIn(rng, ins[g].Min, ins[g].Max)
			}
			x[i] = ends(i, hi)
			out = append(out, policyVec{kind: artifact.VecExtreme, x: x})
		}
	}
	for _, row := range c.Rows {
		if slices.ContainsFunc(row, math.IsNaN) {
			continue
		}
		out = append(out, policyVec{kind: artifact.VecRow, x: quantize.QuantizeInputs(c.Policy, row), fl: row})
	}
	return out
}

// filler draws the rest of the policy vectors, alternately a sampled float state and a
// near-threshold one (each input near a random threshold of its own, or uniform).
type filler struct {
	c   *Input
	rng *rand.Rand
	thr [][]int32
	k   int
}

func (c *Input) newFiller(rng *rand.Rand, ir *quantize.TreeIR) *filler {
	return &filler{c: c, rng: rng, thr: ThresholdsByFeature(len(c.Policy.InputFormats()), ir)}
}

func (f *filler) next() policyVec {
	f.k++
	if f.k%2 == 1 {
		xf := f.c.sampleState(f.rng)
		return policyVec{kind: artifact.VecSampled, x: quantize.QuantizeInputs(f.c.Policy, xf), fl: xf}
	}
	ins := f.c.Policy.InputFormats()
	x := make([]int32, len(ins))
	for i, in := range ins {
		if ts := f.thr[i]; len(ts) > 0 && f.rng.IntN(4) != 0 {
			x[i] = clamp32(int64(ts[f.rng.IntN(len(ts))])+f.rng.Int64N(9)-4, in.Min, in.Max)
		} else {
			x[i] = randIn(f.rng, in.Min, in.Max)
		}
	}
	return policyVec{kind: artifact.VecNearThreshold, x: x}
}

// stateGen draws the state words of a stateful policy's vectors: runs of 32 calls, each run
// starting from zeroed words (a new flow) or random ones (any bytes are a valid state), the
// other calls from the state the golden model left after the previous one.
type stateGen struct {
	c     *Input
	rng   *rand.Rand
	carry []uint32
	k     int
}

func (c *Input) newStates(rng *rand.Rand) *stateGen { return &stateGen{c: c, rng: rng} }

// next is the state for a call on x (nil for a stateless policy).
func (g *stateGen) next(x []int32) []uint32 {
	w := g.c.Policy.StateWords()
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
	g.c.Policy.Call(x, g.carry)
	return st
}
