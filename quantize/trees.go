package quantize

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/model"
)

func chooseInputs(names []string, lo, hi []float64) ([]Input, error) {
	if len(lo) != len(names) || len(hi) != len(names) {
		return nil, fmt.Errorf("quantize: %d names but %d lower and %d upper bounds", len(names), len(lo), len(hi))
	}
	ins := make([]Input, len(names))
	for i, name := range names {
		a, b := lo[i], hi[i]
		if !finite(a) || !finite(b) || a > b {
			return nil, fmt.Errorf("quantize: input %d (%s): range [%v, %v] is not a finite interval", i, name, a, b)
		}
		found := false
		for f := MaxFrac; f >= MinFrac; f-- {
			ra, rb := math.Round(math.Ldexp(a, f)), math.Round(math.Ldexp(b, f))
			if ra >= math.MinInt32 && rb <= math.MaxInt32 {
				ins[i] = Input{Name: name, Frac: f, Min: int32(ra), Max: int32(rb)}
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("quantize: input %d (%s): range [%v, %v] does not fit int32 even at Q%d", i, name, a, b, MinFrac)
		}
	}
	return ins, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// checkInputs refuses formats that are not formats.
func checkInputs(m *model.Model, inputs []Input) error {
	if len(inputs) != m.NumInputs() {
		return fmt.Errorf("quantize: %d input formats for a model with %d inputs (%v)", len(inputs), m.NumInputs(), m.Inputs)
	}
	for i, in := range inputs {
		if in.Frac < MinFrac || in.Frac > MaxFrac {
			return fmt.Errorf("quantize: input %d (%s): Q%d is outside Q%d..Q%d", i, in.Name, in.Frac, MinFrac, MaxFrac)
		}
		if in.Min > in.Max {
			return fmt.Errorf("quantize: input %d (%s): raw range [%d, %d] is empty", i, in.Name, in.Min, in.Max)
		}
	}
	return nil
}

func trees(m *model.Model, inputs []Input, opt TreeOptions) (*TreeIR, error) {
	if m == nil || m.Ensemble == nil {
		return nil, fmt.Errorf("quantize: Trees needs a tree ensemble")
	}
	if err := checkInputs(m, inputs); err != nil {
		return nil, err
	}
	hash, err := model.Hash(m) // validates: no NaN or Inf threshold, leaf or base
	if err != nil {
		return nil, fmt.Errorf("quantize: %w", err)
	}
	outFrac := opt.OutFrac
	if outFrac == 0 {
		outFrac = DefaultOutFrac
	}
	if outFrac < 1 || outFrac > MaxOutFrac {
		return nil, fmt.Errorf("quantize: output Q%d is outside Q1..Q%d", outFrac, MaxOutFrac)
	}
	if opt.Clamp && opt.ClampMin > opt.ClampMax {
		return nil, fmt.Errorf("quantize: clamp [%d, %d] is empty", opt.ClampMin, opt.ClampMax)
	}
	e := m.Ensemble
	ir := &TreeIR{
		Name: m.Name, ModelHash: hash, Inputs: append([]Input(nil), inputs...),
		OutFrac: outFrac, Clamp: opt.Clamp, ClampMin: opt.ClampMin, ClampMax: opt.ClampMax,
		Transform: e.Transform, SigmoidScale: e.SigmoidScale,
	}
	ir.Stats.Trees = len(e.Trees)
	if err := ir.lowerTrees(e); err != nil {
		return nil, err
	}

	// Choose the accumulator's fraction bits and prove its range.
	if opt.AccFrac != 0 {
		if opt.AccFrac < outFrac || opt.AccFrac > MaxFrac {
			return nil, fmt.Errorf("quantize: accumulator Q%d is outside Q%d (the output's)..Q%d", opt.AccFrac, outFrac, MaxFrac)
		}
		if err := ir.quantizeLeaves(e, opt.AccFrac); err != nil {
			return nil, err
		}
	} else {
		start := max(DefaultAccFrac, outFrac)
		for f := start; ; f-- {
			err := ir.quantizeLeaves(e, f)
			if err == nil {
				break
			}
			if f == outFrac {
				return nil, fmt.Errorf("%w (tried Q%d down to Q%d)", err, start, outFrac)
			}
		}
	}
	ir.leafErr(e)
	ir.foldConstantTrees()
	if err := ir.proveRanges(); err != nil {
		return nil, err
	}
	ir.markOblivious()
	ir.stats(e)
	return ir, nil
}

// lowerTrees turns each float tree into an integer tree: exact thresholds, > splits swapped,
// constant splits folded. Leaf values are filled in by quantizeLeaves.
func (ir *TreeIR) lowerTrees(e *model.Ensemble) error {
	ir.Trees = make([]Tree, len(e.Trees))
	for t := range e.Trees {
		lw := lowering{ir: ir, src: &e.Trees[t], tree: t, f32: e.SplitsFloat32()}
		if _, err := lw.node(0, 0); err != nil {
			return err
		}
		ir.Trees[t] = Tree{Src: t, Nodes: lw.nodes, Depth: lw.depth}
	}
	return nil
}

type lowering struct {
	ir    *TreeIR
	src   *model.Tree
	tree  int
	f32   bool
	nodes []Node
	depth int
}

// node lowers the float subtree at src index i, at depth d, and returns its integer index.
func (lw *lowering) node(i, d int) (int, error) {
	n := &lw.src.Nodes[i]
	if n.Leaf {
		if !finite(n.Value) {
			return 0, fmt.Errorf("quantize: tree %d node %d: leaf value is %v", lw.tree, i, n.Value)
		}
		lw.nodes = append(lw.nodes, Node{Kind: KindLeaf, Src: i})
		lw.depth = max(lw.depth, d)
		return len(lw.nodes) - 1, nil
	}
	s, err := Split(n, lw.ir.Inputs[n.Feature], lw.f32)
	if err != nil {
		return 0, fmt.Errorf("quantize: tree %d node %d: %w", lw.tree, i, err)
	}
	left, right := n.Left, n.Right
	if n.Cmp == model.CmpGT {
		left, right = right, left
	}
	if s.Const {
		lw.ir.Stats.Folded = append(lw.ir.Stats.Folded, Folded{
			Tree: lw.tree, Node: i, Feature: n.Feature, Threshold: n.Threshold, Cmp: n.Cmp,
			Left: s.AllLow == (n.Cmp != model.CmpGT),
		})
		if s.AllLow {
			return lw.node(left, d)
		}
		return lw.node(right, d)
	}
	k := len(lw.nodes)
	lw.nodes = append(lw.nodes, Node{Kind: KindSplit, Feature: n.Feature, T: s.T, Src: i})
	l, err := lw.node(left, d+1)
	if err != nil {
		return 0, err
	}
	r, err := lw.node(right, d+1)
	if err != nil {
		return 0, err
	}
	lw.nodes[k].Left, lw.nodes[k].Right = l, r
	return k, nil
}

// IntSplit is a float split's integer form over one input's raw range: raw <= T is the low
// side (left for < and <=, right for >). Const is set when every raw in range is on one side;
// AllLow says which, and T is then meaningless.
type IntSplit struct {
	T      int32
	Const  bool
	AllLow bool
}

// Split computes the integer form of split n over input in, f32 being the ensemble's float32
// compare. It proves the result with n.GoesLeft itself: low(T) and not low(T+1), together with
// the monotonicity of the predicate in raw (see the package doc), so the integer test equals
// the float split for every raw in [in.Min, in.Max].
func Split(n *model.Node, in Input, f32 bool) (IntSplit, error) {
	t := n.Threshold
	if !finite(t) {
		return IntSplit{}, fmt.Errorf("threshold is %v", t)
	}
	if n.Cmp < model.CmpLT || n.Cmp > model.CmpGT {
		return IntSplit{}, fmt.Errorf("unknown comparison %d", int(n.Cmp))
	}
	// The comparison alone (no missing-value rule: an int32 is never NaN) decides the
	// threshold; the real node's rule is checked afterwards.
	cmpOnly := *n
	cmpOnly.Missing = model.MissingNone
	low := func(nd *model.Node, r int64) bool {
		return nd.GoesLeft(math.Ldexp(float64(r), -in.Frac), f32) != (nd.Cmp == model.CmpGT)
	}
	lo, hi := int64(in.Min), int64(in.Max)
	// holds reports whether T is the last low raw: low(T) (or T below range) and not
	// low(T+1) (or T+1 above range).
	holds := func(nd *model.Node, T int64) bool {
		return (T < lo || low(nd, T)) && (T >= hi || !low(nd, T+1))
	}

	// First guess from t·2^Frac (an exact power-of-two scaling): the last raw with
	// raw/2^Frac <= t, or < t for the < split.
	ts := math.Ldexp(t, in.Frac)
	g := math.Floor(ts)
	if n.Cmp == model.CmpLT {
		g = math.Ceil(ts) - 1
	}
	g = min(max(g, float64(lo-1)), float64(hi))
	T := int64(g)
	if !holds(&cmpOnly, T) {
		// float32 rounding moved the boundary: search for it (the predicate is monotone).
		a, b := lo-1, hi+1 // low(a) and not low(b), virtually
		for b-a > 1 {
			mid := a + (b-a)/2
			if low(&cmpOnly, mid) {
				a = mid
			} else {
				b = mid
			}
		}
		T = a
	}
	// The proof, with the real node (missing-value rule included).
	if !holds(n, T) || (T >= lo && !low(n, lo)) || (T < hi && low(n, hi)) {
		return IntSplit{}, fmt.Errorf("split x%d %s %v is not monotone over raw [%d, %d] at Q%d (no integer threshold is exact)", n.Feature, n.Cmp, t, lo, hi, in.Frac)
	}
	if n.Missing == model.MissingZero && lo <= 0 && 0 <= hi && low(n, 0) != (0 <= T) {
		return IntSplit{}, fmt.Errorf("split x%d %s %v has LightGBM missing type Zero: x = 0 goes the default way (%s), which no integer threshold can express", n.Feature, n.Cmp, t, side(n.DefaultLeft))
	}
	switch {
	case T < lo:
		return IntSplit{Const: true, AllLow: false}, nil
	case T >= hi:
		return IntSplit{Const: true, AllLow: true}, nil
	}
	return IntSplit{T: int32(T)}, nil
}

func side(left bool) string {
	if left {
		return "left"
	}
	return "right"
}

// quantizeLeaves sets Base and every leaf to Q(f) and checks the accumulator fits int64 at f.
func (ir *TreeIR) quantizeLeaves(e *model.Ensemble, f int) error {
	q := func(v float64) (int64, bool) {
		if e.Float32 {
			v = float64(float32(v))
		}
		x := math.Round(math.Ldexp(v, f))
		if !finite(x) || math.Abs(x) >= 1<<62 {
			return 0, false
		}
		return int64(x), true
	}
	base, ok := q(e.Base)
	if !ok {
		return fmt.Errorf("quantize: base score %v does not fit int64 in Q%d", e.Base, f)
	}
	lo, hi := base, base
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		tmin, tmax := int64(math.MaxInt64), int64(math.MinInt64)
		for k := range tr.Nodes {
			nd := &tr.Nodes[k]
			if nd.Kind != KindLeaf {
				continue
			}
			v := e.Trees[tr.Src].Nodes[nd.Src].Value
			if !finite(v) {
				return fmt.Errorf("quantize: tree %d node %d: leaf value is %v", tr.Src, nd.Src, v)
			}
			x, ok := q(v)
			if !ok {
				return fmt.Errorf("quantize: tree %d node %d: leaf %v does not fit int64 in Q%d", tr.Src, nd.Src, v, f)
			}
			nd.Value = x
			tmin, tmax = min(tmin, x), max(tmax, x)
		}
		var ok1, ok2 bool
		if lo, ok1 = addInt64(lo, tmin); ok1 {
			hi, ok2 = addInt64(hi, tmax)
		}
		if !ok1 || !ok2 {
			return fmt.Errorf("quantize: the accumulator overflows int64 in Q%d by tree %d", f, tr.Src)
		}
	}
	ir.AccFrac, ir.Base = f, base
	return nil
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

// foldConstantTrees adds trees that folded down to a single leaf into Base.
func (ir *TreeIR) foldConstantTrees() {
	kept := ir.Trees[:0]
	for _, tr := range ir.Trees {
		if len(tr.Nodes) == 1 {
			ir.Base += tr.Nodes[0].Value // in range: quantizeLeaves checked every partial sum
			ir.Stats.ConstTrees = append(ir.Stats.ConstTrees, tr.Src)
			continue
		}
		kept = append(kept, tr)
	}
	ir.Trees = kept
}

// proveRanges runs the interval analysis of the accumulator as C computes it: it starts at
// Base + Addend and adds one leaf per tree, in tree order. It sets Addend, Acc (the range of
// every partial sum), AccBits, and the output's ranges.
func (ir *TreeIR) proveRanges() error {
	ir.Addend = 0
	if k := ir.AccFrac - ir.OutFrac; k > 0 {
		ir.Addend = 1 << (k - 1)
	}
	lo, ok := addInt64(ir.Base, ir.Addend)
	if !ok {
		return fmt.Errorf("quantize: the base plus the rounding addend overflows int64 in Q%d", ir.AccFrac)
	}
	hi := lo
	acc := Interval{lo, hi}
	for t := range ir.Trees {
		tmin, tmax := ir.Trees[t].LeafRange()
		var ok1, ok2 bool
		if lo, ok1 = addInt64(lo, tmin); ok1 {
			hi, ok2 = addInt64(hi, tmax)
		}
		if !ok1 || !ok2 {
			return fmt.Errorf("quantize: the accumulator overflows int64 in Q%d", ir.AccFrac)
		}
		acc.Lo, acc.Hi = min(acc.Lo, lo), max(acc.Hi, hi)
	}
	ir.Acc = acc
	ir.AccBits = 64
	if acc.Lo >= math.MinInt32 && acc.Hi <= math.MaxInt32 {
		ir.AccBits = 32
	}
	k := ir.AccFrac - ir.OutFrac
	ylo, yhi := lo>>k, hi>>k // lo and hi include the addend
	if !ir.Clamp && (ylo < math.MinInt32 || yhi > math.MaxInt32) {
		return fmt.Errorf("quantize: the score's range [%g, %g] does not fit int32 in Q%d; clamp it or lower the output's fraction bits",
			math.Ldexp(float64(lo-ir.Addend), -ir.AccFrac), math.Ldexp(float64(hi-ir.Addend), -ir.AccFrac), ir.OutFrac)
	}
	ir.Rounded = Interval{ylo, yhi}
	if ir.Clamp {
		ylo = min(max(ylo, int64(ir.ClampMin)), int64(ir.ClampMax))
		yhi = min(max(yhi, int64(ir.ClampMin)), int64(ir.ClampMax))
	}
	ir.Out = Interval{ylo, yhi}
	return nil
}

// LeafRange is the smallest and largest leaf value of the tree.
func (t *Tree) LeafRange() (lo, hi int64) {
	lo, hi = math.MaxInt64, math.MinInt64
	for k := range t.Nodes {
		if nd := &t.Nodes[k]; nd.Kind == KindLeaf {
			lo, hi = min(lo, nd.Value), max(hi, nd.Value)
		}
	}
	return lo, hi
}

// markOblivious flags complete trees whose levels each test one feature against one
// threshold, and fills their Levels and leaf Table.
func (ir *TreeIR) markOblivious() {
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		d := tr.Depth
		if d == 0 || d > 16 || len(tr.Nodes) != 1<<(d+1)-1 {
			continue
		}
		levels := make([]Level, d)
		set := make([]bool, d)
		table := make([]int64, 1<<d)
		ok := true
		var walk func(i, depth int, idx int)
		walk = func(i, depth, idx int) {
			if !ok {
				return
			}
			nd := &tr.Nodes[i]
			if nd.Kind == KindLeaf {
				if depth != d {
					ok = false
					return
				}
				table[idx] = nd.Value
				return
			}
			if depth >= d {
				ok = false
				return
			}
			lv := Level{nd.Feature, nd.T}
			if !set[depth] {
				levels[depth], set[depth] = lv, true
			} else if levels[depth] != lv {
				ok = false
				return
			}
			walk(nd.Left, depth+1, idx<<1)
			walk(nd.Right, depth+1, idx<<1|1)
		}
		walk(0, 0, 0)
		if ok {
			tr.Oblivious, tr.Levels, tr.Table = true, levels, table
		}
	}
}

// leafErr sets Stats.LeafErr: the base's rounding error plus, per tree, the largest rounding
// error of a leaf the tree can reach. Runs before constant trees are folded into Base.
func (ir *TreeIR) leafErr(e *model.Ensemble) {
	qerr := func(v float64, q int64) float64 {
		if e.Float32 {
			v = float64(float32(v))
		}
		// q came from a float64 holding an integer, so float64(q) is exact, and so is the scaling.
		return math.Abs(math.Ldexp(float64(q), -ir.AccFrac) - v)
	}
	s := &ir.Stats
	s.LeafErr = qerr(e.Base, ir.Base)
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		worst := 0.0
		for k := range tr.Nodes {
			if nd := &tr.Nodes[k]; nd.Kind == KindLeaf {
				worst = max(worst, qerr(e.Trees[tr.Src].Nodes[nd.Src].Value, nd.Value))
			}
		}
		s.LeafErr += worst
	}
	s.LeafErrBound = float64(len(e.Trees)+1) * math.Ldexp(1, -(ir.AccFrac+1))
}

// stats fills the rest of Stats: shape counts and the input and output error bounds.
func (ir *TreeIR) stats(e *model.Ensemble) {
	s := &ir.Stats
	n := len(ir.Inputs)
	s.SplitsPerFeature = make([]int, n)
	s.ThresholdsPerFeature = make([]int, n)
	distinct := make([]map[int32]bool, n)
	for i := range distinct {
		distinct[i] = map[int32]bool{}
	}
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		s.MaxDepth = max(s.MaxDepth, tr.Depth)
		if tr.Oblivious {
			s.Oblivious++
		}
		for k := range tr.Nodes {
			nd := &tr.Nodes[k]
			s.Nodes++
			if nd.Kind == KindLeaf {
				s.Leaves++
				continue
			}
			s.Splits++
			s.SplitsPerFeature[nd.Feature]++
			distinct[nd.Feature][nd.T] = true
		}
	}
	for i := range distinct {
		s.ThresholdsPerFeature[i] = len(distinct[i])
	}
	s.InputErr = make([]float64, n)
	for i, in := range ir.Inputs {
		s.InputErr[i] = math.Ldexp(1, -(in.Frac + 1))
	}
	if ir.AccFrac > ir.OutFrac {
		s.OutErr = math.Ldexp(1, -(ir.OutFrac + 1))
	}
	s.ScoreErr = s.LeafErr + s.OutErr
}
