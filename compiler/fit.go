package compiler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/termtext"
)

// Every code form nicc emits spends at least one instruction on each of the units counted
// below, and an instruction costs at least the profile's cheapest class (fwsim.Profile.
// MinCost); a unit of code is at least 2 bytes (a compressed instruction).
//
// Trees: one instruction per level of each tree's deepest path (a compare-and-branch in the
// branch form, a compare in the table and walk forms) and one add of its leaf. The depth is
// counted after what gcc may remove: a split whose outcome the splits above it decide, and a
// split whose two subtrees are the same (treeShape). Bytes: for each tree the least of its
// forms, 2 per split and leaf of that shape (branch), or its tables (walk, table).
//
// Dense networks: one instruction per nonzero weight of each channel that is used (the
// emitted C computes each channel as its own sum; a multiply by a constant may become a
// shift or an add, never nothing; identical channels are counted once), plus one for the
// requantization of each. Bytes: 2 per such instruction (the weights are immediates in the
// code) and the activation tables.
//
// LSTM: one instruction per nonzero packed weight word (a multiply-add of three lanes), per
// gate table lookup, and per nonzero output weight. Bytes: 2 per packed word, plus the gate,
// cell and output tables.
const codeUnitBytes = 2

// lowerBound is the bound of the compilation's integer IR on profile p.
func (f *fitter) lowerBound(p *fwsim.Profile) artifact.LowerBound {
	unit := p.MinCost()
	switch ir := f.in.model.Policy.(type) {
	case *quantize.LSTMIR:
		return lstmBound(ir, unit)
	case *quantize.MLPIR:
		return mlpBound(ir, unit)
	}
	ir := f.in.model.Policy.(*quantize.TreeIR)
	f.rankGroups = rankGroupings(ir)
	lb := treesBound(ir, unit, f.rankGroups)
	// Above BranchMaxSplits (or with --form walk) the walk form is the only candidate, and
	// its own bound is higher: it takes every step, and loads.
	if f.in.form == codegen.FormWalk.String() || f.in.form == "" && f.form == codegen.FormWalk {
		if w, from := walkBound(ir, p); w > lb.Cycles {
			lb.Cycles, lb.CyclesFrom = w, from
		}
	}
	return lb
}

// walkBound is the walk form's lower bound in cycles (codegen.FormWalk): a walked tree takes
// every step of its depth, whatever the input, each at least two dependent loads (its node,
// then the input the node names) and an add (the child's index), then a load and an add of
// its leaf; an oblivious tree, a table lookup, at least a compare per level and a load and an
// add of its leaf.
func walkBound(ir *quantize.TreeIR, p *fwsim.Profile) (uint64, string) {
	cheapest := func(c fwsim.Class) uint64 { return min(p.Cost(c, false), p.Cost(c, true)) }
	load, alu := cheapest(fwsim.ClassLoad), cheapest(fwsim.ClassALU)
	var steps, levels, trees uint64
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		if tr.Depth == 0 {
			continue // a constant: gcc adds it to the base
		}
		trees++
		if tr.Oblivious {
			levels += uint64(tr.Depth)
		} else {
			steps += uint64(tr.Depth)
		}
	}
	return steps*(2*load+alu) + levels*alu + trees*(load+alu), fmt.Sprintf(
		"the walk form: %s trees, %s walk steps of two loads and an add, %s oblivious levels of a compare, and a load and an add of each tree's leaf, at %d cycle(s) a load and %d an add",
		termtext.Thousands(trees), termtext.Thousands(steps), termtext.Thousands(levels), load, alu)
}

// fitInput is what the fit stage reads: the golden model and the options that bound its build.
type fitInput struct {
	model              *golden.Model
	modelPath          string // the model file, for messages
	core               string
	form               string // --form: "" lets fit choose
	maxText, maxRodata uint64
	budget             time.Duration
	threads            int
	force              bool
	progress           func(stage string, done, total int)
	// ctx stops the builds of the candidates' host drivers fit starts ahead (speculator); hostCC
	// is the host compiler they run ("": none is built ahead).
	ctx    context.Context
	hostCC string
}

// fitInput is the fit stage's input from the stages before it.
func (c *compilation) fitInput() fitInput {
	o := &c.opt
	in := fitInput{model: c.Model, modelPath: o.Model, core: o.Core, form: o.Form, maxText: o.MaxText, maxRodata: o.MaxRodata,
		budget: o.Budget, threads: o.ThreadsSharing, force: o.Force, progress: c.progress, ctx: c.context(), hostCC: o.HostCC}
	if o.tamper != nil {
		in.hostCC = "" // a test edits the sources after emit: the host drivers built ahead would be of other C
	}
	return in
}

// fitter is the fit stage at work: what it reads, and the plan it makes.
type fitter struct {
	in fitInput
	*planned
}

// fitStage chooses how to build the model and refuses, before anything is built, a model
// whose lower bound is over the budget or over the core's memory, with the numbers; with
// force it notes the overrun and goes on. Its output is never nil: on a failure, it holds
// the plan as far as fit got (a report of an over-memory failure shows its candidates).
func fitStage(in fitInput) (*planned, error) {
	f := &fitter{in: in, planned: &planned{}}
	return f.planned, f.fit()
}

// fit is fitStage's work: choosePlan, the bound, the candidates and the choice among them.
func (f *fitter) fit() error {
	p, err := fwsim.LookupProfile(f.in.core)
	if err != nil {
		return err
	}
	f.choosePlan()
	limit := f.memoryBudget(p)
	f.memory = limit
	if err := f.checkBound(p); err != nil {
		return err
	}
	var cs []candidate
	switch ir := f.in.model.Policy.(type) {
	case *quantize.TreeIR:
		cs, err = f.candidates(ir, limit)
	case *quantize.LSTMIR:
		cs, err = f.lstmCandidates()
	default:
		if f.in.form != "" && f.in.form != codegen.FormBranch.String() {
			return fmt.Errorf("%s: --form %s: an MLP is straight-line code, built in the branch form only", f.in.modelPath, f.in.form)
		}
		return nil
	}
	if err != nil {
		return err
	}
	return f.chooseForm(cs, limit, p)
}

// checkBound refuses a model whose lower bound is over the budget or the core's memory.
func (f *fitter) checkBound(p *fwsim.Profile) error {
	lb := f.lowerBound(p)
	f.bound = &lb
	threads := f.in.threads
	if threads == 0 {
		threads = p.Threads
	}
	limit := f.in.budget
	if limit == 0 {
		limit = budget.Default
	}
	var over []string
	if us := p.Seconds(lb.Cycles, threads) * 1e6; us > float64(limit.Nanoseconds())/1e3 {
		budgetCycles := uint64(limit.Seconds() * p.ClockHz / float64(threads))
		over = append(over, fmt.Sprintf("at least %s cycles (%s) = %s µs on %s, over the %s µs budget (%s cycles)",
			termtext.Thousands(lb.Cycles), lb.CyclesFrom, budget.Micros(us), p.Name, artifact.DurationUs(limit), termtext.Thousands(budgetCycles)))
	}
	m := f.memory
	if lb.Bytes > m.TextBytes+m.RodataBytes && lb.Bytes <= p.MemoryBytes {
		over = append(over, fmt.Sprintf("at least %s bytes of code and tables (%s), over the memory budget of %s (%s .text, %s; %s .rodata, %s)",
			termtext.Thousands(lb.Bytes), lb.BytesFrom, termtext.Thousands(m.TextBytes+m.RodataBytes), termtext.Thousands(m.TextBytes), artifact.SourceShort(m.TextSource), termtext.Thousands(m.RodataBytes), artifact.SourceShort(m.RodataSource)))
	}
	if lb.Bytes > p.MemoryBytes {
		assumed := ""
		if strings.HasPrefix(p.Sources["memory_bytes"], "assumption") {
			assumed = "assumed; "
		}
		over = append(over, fmt.Sprintf("at least %s bytes of code and tables (%s), over the %s bytes of %s's memory (%snicc budget --list-cores)",
			termtext.Thousands(lb.Bytes), lb.BytesFrom, termtext.Thousands(p.MemoryBytes), p.Name, assumed))
	}
	if len(over) == 0 {
		return nil
	}
	what := strings.Join(over, ", and ")
	if f.in.force {
		f.notes = append(f.notes, "built with --force: it needs "+what)
		return nil
	}
	return &budget.CheckError{Err: &TooBigError{Bound: lb, msg: fmt.Sprintf("%s: model %s needs %s; --force builds it anyway", f.in.modelPath, f.modelName(), what)}}
}

// checkMemory refuses a built firmware whose .text or .rodata is over the memory budget.
func (c *compilation) checkMemory() error {
	text, rodata, err := textBytes(c.elf)
	if err != nil {
		return err
	}
	if msg, over := c.memory.Over(text, rodata); over {
		hint := "; --force builds, verifies and bounds it anyway"
		if c.opt.Force {
			hint = " (built with --force)"
		}
		return &budget.CheckError{Err: &artifact.OverMemoryError{Msg: fmt.Sprintf("%s: the %s form's firmware has %s%s", c.opt.Model, c.plan.Form, msg, hint)}}
	}
	return nil
}

// TooBigError is the fit stage's refusal of a model whose lower bound is over the budget or
// the core's memory. Compile returns it inside a *CheckError, with no report.
type TooBigError struct {
	Bound artifact.LowerBound
	msg   string
}

func (e *TooBigError) Error() string { return e.msg }

// modelName is the model's name for messages.
func (f *fitter) modelName() string {
	if f.in.model.Float.Name == "" {
		return "(unnamed)"
	}
	return f.in.model.Float.Name
}

// treeShape is what gcc may keep of one integer tree: the longest path of tests, and how
// many distinct splits and leaves it has, after removing every split the splits above it
// decide and every split whose subtrees are the same function (equal after the same
// removals). Shapes are hash-consed: equal subtrees get the same id.
type treeShape struct {
	ir     *quantize.TreeIR
	tr     *quantize.Tree
	ids    map[shapeKey]int
	depths []int // by id
	root   int
	splits int // distinct splits kept
	leaves int // distinct leaves
}

type shapeKey struct {
	leaf        bool
	value       int64
	feature     int
	t           int32
	left, right int
}

func newTreeShape(ir *quantize.TreeIR, tr *quantize.Tree) *treeShape {
	s := &treeShape{ir: ir, tr: tr, ids: map[shapeKey]int{}}
	lo, hi := make([]int64, len(ir.Inputs)), make([]int64, len(ir.Inputs))
	for i, in := range ir.Inputs {
		lo[i], hi[i] = int64(in.Min), int64(in.Max)
	}
	s.root = s.node(0, lo, hi)
	return s
}

// depth is the tree's longest path of tests.
func (s *treeShape) depth() int { return s.depths[s.root] }

func (s *treeShape) intern(k shapeKey, depth int) int {
	if id, ok := s.ids[k]; ok {
		return id
	}
	id := len(s.depths)
	s.ids[k] = id
	s.depths = append(s.depths, depth)
	if k.leaf {
		s.leaves++
	} else {
		s.splits++
	}
	return id
}

// node is the shape id of the subtree at i, reached by inputs with x[f] in [lo[f], hi[f]].
func (s *treeShape) node(i int, lo, hi []int64) int {
	nd := &s.tr.Nodes[i]
	if nd.Kind == quantize.KindLeaf {
		return s.intern(shapeKey{leaf: true, value: nd.Value}, 0)
	}
	f, t := nd.Feature, int64(nd.T)
	switch {
	case hi[f] <= t: // every input reaching here goes left
		return s.node(nd.Left, lo, hi)
	case lo[f] > t:
		return s.node(nd.Right, lo, hi)
	}
	h := hi[f]
	hi[f] = t
	l := s.node(nd.Left, lo, hi)
	hi[f] = h
	o := lo[f]
	lo[f] = t + 1
	r := s.node(nd.Right, lo, hi)
	lo[f] = o
	if l == r {
		return l
	}
	return s.intern(shapeKey{feature: f, t: nd.T, left: l, right: r}, 1+max(s.depths[l], s.depths[r]))
}

// treesBound is an ensemble's lower bound (see codeUnitBytes), unit the cheapest instruction,
// rankGroups its rank form's groupings (rankGroupings).
func treesBound(ir *quantize.TreeIR, unit uint64, rankGroups [][][]int) artifact.LowerBound {
	accBytes := uint64(ir.AccBits / 8)
	var levels, trees, units, bytes uint64
	for t := range ir.Trees {
		tr := &ir.Trees[t]
		s := newTreeShape(ir, tr)
		if s.depth() == 0 {
			continue // a constant: gcc adds it to the base
		}
		trees++
		levels += uint64(s.depth())
		b := codeUnitBytes * uint64(s.splits+s.leaves)
		if tr.Oblivious {
			b = min(b, uint64(len(tr.Table))*accBytes)
		} else {
			b = min(b, uint64(len(tr.Nodes))*(8+accBytes))
		}
		bytes += b
		units += uint64(s.splits + s.leaves)
	}
	lb := artifact.LowerBound{
		Cycles: (levels + trees) * unit,
		CyclesFrom: fmt.Sprintf("%s trees: %s levels on their deepest paths and %s leaf adds, at least %d cycle(s) each",
			termtext.Thousands(trees), termtext.Thousands(levels), termtext.Thousands(trees), unit),
		Bytes:     bytes,
		BytesFrom: fmt.Sprintf("%s distinct splits and leaves, at least %d bytes each", termtext.Thousands(units), codeUnitBytes),
	}
	if len(rankGroups) == 0 {
		return lb // no rank form: its trees fit no table
	}
	// The rank form (a candidate at this size) compares once per feature split on, however
	// deep the trees, adds at least one table entry, and stores every distinct threshold.
	var features, thresholds uint64
	for _, n := range ir.Stats.ThresholdsPerFeature {
		if n > 0 {
			features++
			thresholds += uint64(n)
		}
	}
	if c := (features + 1) * unit; c < lb.Cycles {
		lb.Cycles, lb.CyclesFrom = c, fmt.Sprintf("the rank form: a compare for each of %d features and a table add, at least %d cycle(s) each", features, unit)
	}
	if b := 4 * thresholds; b < lb.Bytes {
		lb.Bytes, lb.BytesFrom = b, fmt.Sprintf("the rank form: %s distinct thresholds, 4 bytes each", termtext.Thousands(thresholds))
	}
	return lb
}

// mlpBound is a dense network's lower bound (see codeUnitBytes).
func mlpBound(ir *quantize.MLPIR, unit uint64) artifact.LowerBound {
	// used[k][j]: channel j of layer k is read by the next layer (the last layer's one
	// output always is), as codegen decides what to compute.
	n := len(ir.Layers)
	used := make([][]bool, n)
	used[n-1] = []bool{true}
	for k := n - 1; k > 0; k-- {
		l := &ir.Layers[k]
		used[k-1] = make([]bool, l.In)
		for j := range l.Out {
			if used[k][j] {
				for i, w := range l.W[j] {
					used[k-1][i] = used[k-1][i] || w != 0
				}
			}
		}
	}
	var terms, channels, tables uint64
	for k := range ir.Layers {
		l := &ir.Layers[k]
		seen := map[string]bool{}
		for j := range l.Out {
			if !used[k][j] {
				continue
			}
			key := fmt.Sprint(l.W[j], l.B[j], l.Mult[j], l.Shift[j])
			if seen[key] {
				continue
			}
			seen[key] = true
			channels++
			for _, w := range l.W[j] {
				if w != 0 {
					terms++
				}
			}
		}
		tables += uint64(len(l.Table)) + 4*uint64(len(l.OutTable))
	}
	return artifact.LowerBound{
		Cycles:     (terms + channels) * unit,
		CyclesFrom: fmt.Sprintf("%s nonzero weights and %s channels, at least %d cycle(s) each", termtext.Thousands(terms), termtext.Thousands(channels), unit),
		Bytes:      codeUnitBytes*(terms+channels) + tables,
		BytesFrom:  fmt.Sprintf("at least %d bytes per weight and channel, and %s bytes of tables", codeUnitBytes, termtext.Thousands(tables)),
	}
}

// lstmBound is an LSTM's lower bound (see codeUnitBytes).
func lstmBound(ir *quantize.LSTMIR, unit uint64) artifact.LowerBound {
	// Each input's nonzero weights, Lanes to a word, over the channels the gates can
	// read (a dense unit proven off is never computed).
	words := func(l *quantize.LaneLayer, dense bool) uint64 {
		var n uint64
		for i := range l.In {
			var k uint64
			for j := range l.Out {
				if l.W[j][i] != 0 && (!dense || l.Act(j).Hi > 0) {
					k++
				}
			}
			n += (k + uint64(l.Lanes()) - 1) / uint64(l.Lanes())
		}
		return n
	}
	packed := words(&ir.Pre, true) + words(&ir.Gates, false)
	lookups := uint64(4 * ir.Hidden)
	var out uint64
	for _, w := range ir.OutW {
		if w != 0 {
			out++
		}
	}
	tables := uint64(len(ir.Sigmoid) + codegen.GEntryBytes(ir)*len(ir.GTable) + 2*len(ir.CellDec) + 2*len(ir.TanhC) + 4*len(ir.OutTable))
	return artifact.LowerBound{
		Cycles: (packed + lookups + out) * unit,
		CyclesFrom: fmt.Sprintf("%s packed weight words, %s gate lookups and %s output weights, at least %d cycle(s) each",
			termtext.Thousands(packed), termtext.Thousands(lookups), termtext.Thousands(out), unit),
		Bytes:     codeUnitBytes*packed + tables,
		BytesFrom: fmt.Sprintf("at least %d bytes per packed word, and %s bytes of tables", codeUnitBytes, termtext.Thousands(tables)),
	}
}
