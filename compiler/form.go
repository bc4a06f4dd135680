package compiler

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/quantize"

	"github.com/nicc-dev/nicc/codegen"
)

// A tree ensemble's optimisation level, and today's form (the candidate chooseForm always
// builds), follow its number of splits, so that gcc's time stays in seconds (measured with
// riscv64-unknown-elf-gcc 12.2 on random complete trees, issue 10):
//
//   - up to O2MaxSplits: nested if/else at -O2. gcc's jump threading duplicates code and
//     takes time superlinear in it (10 trees of depth 4: 0.5 s, 100 of depth 6: over a
//     minute), but at this size it saves cycles (the shipped 10 × 4: 200 cycles on dpa,
//     223 at -O1).
//   - up to BranchMaxSplits: nested if/else at -O1 (-findirect-inlining lets the RL-CC
//     handler inline the policy it is given by pointer, as -O2 does): 100 × 6 builds in
//     3 s instead of 72-108 s, in fewer cycles (3385 against 3576) and less than half the
//     code.
//   - above: codegen.FormWalk, whose tables gcc compiles as data (100 × 8 in 1.3 s, 300 × 8
//     in 5 s), at about 14 cycles a level on dpa against about 5 for if/else.
const (
	O2MaxSplits     = 512
	BranchMaxSplits = 16384
)

// OptO1 replaces -O2 in the host and firmware flags of an ensemble above O2MaxSplits.
var OptO1 = []string{"-O1", "-findirect-inlining"}

// choosePlan chooses the code form and optimisation level (see O2MaxSplits); networks keep -O2.
func (f *fitter) choosePlan() {
	f.plan = artifact.BuildInfo{Form: codegen.FormBranch.String(), Opt: []string{"-O2"}}
	ir, trees := f.in.model.Policy.(*quantize.TreeIR)
	if !trees {
		f.plan.Why = "networks are straight-line code at -O2"
		return
	}
	n := ir.Stats.Splits
	switch {
	case n <= O2MaxSplits:
		f.plan.Why = fmt.Sprintf("%d splits, at most %d: nested if/else at -O2", n, O2MaxSplits)
	case n <= BranchMaxSplits:
		f.plan.Opt = OptO1
		f.plan.Why = fmt.Sprintf("%d splits, over %d: -O1, which gcc builds in time linear in the code", n, O2MaxSplits)
	default:
		f.form = codegen.FormWalk
		f.plan = artifact.BuildInfo{Form: f.form.String(), Opt: OptO1,
			Why: fmt.Sprintf("%d splits, over %d: node tables walked level by level, which gcc builds as data", n, BranchMaxSplits)}
	}
}

// withOpt is flags with opt, gcc's optimisation flags, in place of -O2 (flags as they are
// when opt is empty).
func withOpt(flags, opt []string) []string {
	i := slices.Index(flags, "-O2")
	if i < 0 || len(opt) == 0 {
		return slices.Clone(flags)
	}
	return slices.Concat(flags[:i], opt, flags[i+1:])
}
