package compiler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
	"github.com/nicc-dev/nicc/quantize"
)

// q12 quantizes m's inputs in Q12 over [-1.01, 1.01] (modeltest's thresholds lie in [-1, 1]).
func q12(t *testing.T, m *model.Model) *quantize.TreeIR {
	t.Helper()
	ins := make([]quantize.Input, len(m.Inputs))
	for i, name := range m.Inputs {
		ins[i] = quantize.Input{Name: name, Frac: 12, Min: -4137, Max: 4137}
	}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}

// The shape gcc may keep: a split that the splits above it decide is no test, and a split
// whose two subtrees are the same is none either.
func TestTreeShape(t *testing.T) {
	leaf := func(v float64) model.Node { return model.Node{Leaf: true, Value: v} }
	split := func(f int, thr float64, l, r int) model.Node {
		return model.Node{Feature: f, Threshold: thr, Cmp: model.CmpLE, Left: l, Right: r}
	}
	m := treeModel([]string{"a", "b"},
		// depth 3 as written; x0 <= 0.5 then x0 <= 0.75 is always true, and the right side's
		// two subtrees are equal: one test is left.
		model.Tree{Nodes: []model.Node{
			split(0, 0.5, 1, 2),
			split(0, 0.75, 3, 4), split(1, 0, 5, 6),
			split(1, 0.25, 7, 8), leaf(9),
			split(0, 0.6, 9, 10), split(0, 0.6, 11, 12),
			leaf(1), leaf(2), leaf(3), leaf(4), leaf(3), leaf(4),
		}},
		// a complete tree of depth 2 with distinct leaves: all of it stays.
		model.Tree{Nodes: []model.Node{split(0, 0, 1, 2), split(1, 0, 3, 4), split(1, 0.5, 5, 6), leaf(1), leaf(2), leaf(3), leaf(4)}},
	)
	ir := q12(t, m)
	want := []struct{ depth, splits, leaves int }{{2, 3, 4}, {2, 3, 4}}
	for i := range ir.Trees {
		s := newTreeShape(ir, &ir.Trees[i])
		if got := (struct{ depth, splits, leaves int }{s.depth(), s.splits, s.leaves}); got != want[i] {
			t.Errorf("tree %d: shape %+v, want %+v (IR depth %d)", i, got, want[i], ir.Trees[i].Depth)
		}
	}
	dpa, _ := fwsim.LookupProfile("dpa")
	lb := treesBound(ir, dpa.MinCost(), rankGroupings(ir))
	// Branching: (2 + 1) + (2 + 1) cycles; the rank form, a candidate at this size, fewer: a
	// compare for each of the 2 features and an add. Bytes: (3 + 4) + (3 + 4) units of at
	// least 2 bytes, or 7 distinct thresholds of 4 bytes: 28 either way.
	if lb.Cycles != 3 || lb.Bytes != 28 || !strings.Contains(lb.CyclesFrom, "the rank form: a compare for each of 2 features and a table add") {
		t.Errorf("bound %+v", lb)
	}
}

// The code form and the optimisation level follow the number of splits.
func TestChoosePlan(t *testing.T) {
	for _, c := range []struct {
		trees, depth int
		form         codegen.Form
		opt          []string
	}{
		{10, 4, codegen.FormBranch, []string{"-O2"}},
		{100, 6, codegen.FormBranch, OptO1},
		{70, 8, codegen.FormWalk, OptO1},
	} {
		ir := q12(t, modeltest.Trees("m", modeltest.RLCCInputs, c.trees, c.depth, 1))
		p := &fitter{in: fitInput{model: &golden.Model{Quantized: &golden.Quantized{Policy: ir}}}, planned: &planned{}}
		p.choosePlan()
		if p.form != c.form || p.plan.Form != c.form.String() || !slices.Equal(p.plan.Opt, c.opt) {
			t.Errorf("%d×%d (%d splits): form %v, plan %+v", c.trees, c.depth, ir.Stats.Splits, p.form, p.plan)
		}
		flags := withOpt(HostFlags, p.plan.Opt)
		if slices.Contains(flags, "-O2") != (c.opt[0] == "-O2") || !slices.Contains(flags, c.opt[0]) || len(flags) != len(HostFlags)-1+len(c.opt) {
			t.Errorf("%d×%d: host flags %v", c.trees, c.depth, flags)
		}
	}
	p := &fitter{in: fitInput{model: &golden.Model{Quantized: &golden.Quantized{Policy: &quantize.MLPIR{}}}}, planned: &planned{}}
	if p.choosePlan(); p.form != codegen.FormBranch || !slices.Equal(p.plan.Opt, []string{"-O2"}) {
		t.Errorf("network: plan %+v", p.plan)
	}
}

// A model whose lower bound is over the budget is refused before anything is written, with
// the numbers on one line.
func TestFitRefusesOverBudget(t *testing.T) {
	out := t.TempDir()
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: out, Handler: artifact.HandlerNone, Budget: 2 * time.Nanosecond})
	var ce *budget.CheckError
	var big *TooBigError
	if r != nil || !errors.As(err, &ce) || !errors.As(err, &big) {
		t.Fatalf("got %v, report %v; want a TooBigError inside a budget.CheckError and no report", err, r)
	}
	want := rlccXGB + ": model rlcc_xgb needs at least 5 cycles (the rank form: a compare for each of 4 features and a table add, at least 1 cycle(s) each) = 0.003 µs on dpa, over the 0.002 µs budget (3 cycles); --force builds it anyway"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if big.Bound.Cycles != 5 {
		t.Errorf("bound %+v", big.Bound)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused, yet %d files were written into the output directory", len(ents))
	}
}

// A model whose code and tables cannot fit the core's memory is refused too: 40 trees of
// depth 8 need at least 2 bytes for each of their ~20k splits and leaves, over the 32 KiB
// the sifive-e31 profile holds; their 360 cycles fit its 2 µs (640 cycles).
func TestFitRefusesOverMemory(t *testing.T) {
	m := modeltest.Trees("big", modeltest.RLCCInputs, 40, 8, 1)
	_, err := Compile(CompileOptions{Model: saveModel(t, m), Out: t.TempDir(), Handler: artifact.HandlerNone, Core: "sifive-e31"})
	var big *TooBigError
	if !errors.As(err, &big) {
		t.Fatalf("error %v, want a TooBigError", err)
	}
	if big.Bound.Cycles != 360 || big.Bound.Bytes <= 32768 {
		t.Errorf("bound %+v", big.Bound)
	}
	for _, want := range []string{"model big needs at least ", " bytes of code and tables (", "distinct splits and leaves, at least 2 bytes each), over the 32,768 bytes of sifive-e31's memory (assumed; nicc budget --list-cores); --force builds it anyway"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "cycles") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: the cycles fit, and it is one line", err)
	}
}

// Force builds what would be refused: here it is then over budget, with the report.
func TestFitForce(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: out, Handler: artifact.HandlerNone, Budget: 2 * time.Nanosecond, Force: true, Vectors: 1000})
	var ce *budget.CheckError
	var big *TooBigError
	if r == nil || !errors.As(err, &ce) || errors.As(err, &big) || r.Budget.Fits {
		t.Fatalf("got %v, report %v; want the build and an over-budget budget.CheckError", err, r)
	}
	if !strings.Contains(err.Error(), "over budget") || r.Verify.Mismatches != 0 || r.LowerBound == nil || r.LowerBound.Cycles != 5 ||
		r.Budget.WCETCycles < r.LowerBound.Cycles {
		t.Errorf("error %v, verify %+v, bound %+v, WCET %d", err, r.Verify, r.LowerBound, r.Budget.WCETCycles)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "built with --force: it needs at least 5 cycles") }) {
		t.Errorf("notes %q", r.Notes)
	}
	if _, err := os.Stat(filepath.Join(out, artifact.FirmwareFile)); err != nil {
		t.Error(err)
	}
}

// A deep ensemble (10 trees of depth 12, 40950 splits) is built as walked node tables in
// seconds and fits the budget; its code is straight-line, so every input costs its WCET. Its
// tables (983 KB) need a .rodata budget over dpa's 256 KiB. The lower bound is the walk
// form's: every step of every tree.
func TestCompileDeepEnsembleWalks(t *testing.T) {
	t.Parallel()
	m := modeltest.Trees("deep", modeltest.RLCCInputs, 10, 12, 1)
	r, err := Compile(CompileOptions{Model: saveModel(t, m), Out: t.TempDir(), Handler: artifact.HandlerNone, Vectors: 2000, MaxRodata: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if b := r.Build; b.Form != "walk" || !slices.Equal(b.Opt, OptO1) {
		t.Errorf("built %+v, want the walk form at -O1", b)
	}
	v, b, lb := r.Verify, r.Budget, r.LowerBound
	if v.Mismatches != 0 || v.UBSan != "clean" || v.Vectors < 4*r.Quant.Splits || !b.Fits {
		t.Errorf("verify %+v, budget %s", v, b.Verdict)
	}
	if lb.Cycles != 630 || !strings.HasPrefix(lb.CyclesFrom, "the walk form: 10 trees, 120 walk steps") || b.WCETCycles < lb.Cycles || b.Measured == nil || b.Measured.MaxCycles != b.WCETCycles {
		t.Errorf("lower bound %d, WCET %d, measured %+v", lb.Cycles, b.WCETCycles, b.Measured)
	}
	t.Logf("10×12 walked: WCET %d cycles (bound %d: %.2f), %d bytes of code and %d of tables", b.WCETCycles, lb.Cycles, float64(lb.Cycles)/float64(b.WCETCycles), r.CodeBytes, r.RodataBytes)
}

// The fit stage's memory bound is a lower one: a firmware that passes it and is then bigger
// than the core's memory gets a note. A 56×4 RL-CC handler at -O2 (jump threading copies code)
// is over the 32 KiB of the sifive-e31 profile (given 10 µs: that core's clock is slow); it is
// over that profile's 16 KiB .text budget too, so only --force builds it, and the compile fails.
func TestReportNotesMemory(t *testing.T) {
	t.Parallel()
	m := modeltest.Trees("wide", modeltest.RLCCInputs, 56, 4, 3)
	r, err := Compile(CompileOptions{Model: saveModel(t, m), Out: t.TempDir(), Core: "sifive-e31", Budget: 10 * time.Microsecond, Form: "branch", Vectors: 1000, Force: true})
	var oe *artifact.OverMemoryError
	if !errors.As(err, &oe) || r == nil || r.Failure == nil || r.Failure.Kind != "over_memory" {
		t.Fatalf("error %v, report %+v: want an over-memory failure", err, r)
	}
	if r.CodeBytes+r.RodataBytes <= 32768 {
		t.Fatalf("%d bytes of code and tables: the test needs more than 32 KiB", r.CodeBytes+r.RodataBytes)
	}
	want := fmt.Sprintf("the firmware's %d bytes of code and tables are over the 32768 bytes of sifive-e31's memory (assumed; nicc budget --list-cores): its cycle costs assume they fit", r.CodeBytes+r.RodataBytes)
	if !slices.Contains(r.Notes, want) {
		t.Errorf("notes %q, want %q", r.Notes, want)
	}
}
