package compiler

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/quantize"
)

// The compile chooses the candidate form with the least WCET among those within the memory
// budget, and honours the budget: a limit the cheapest form passes moves the choice to the
// cheapest that fits, limits no form meets are refused (with --force: built, verified, and failed), and --form
// restricts the candidates. Each chosen form is verified by the compile.
func TestChooseFormByCost(t *testing.T) {
	t.Parallel()
	compile := func(t *testing.T, opt CompileOptions) *artifact.CompileReport {
		t.Helper()
		opt.Model, opt.Out, opt.Handler, opt.Vectors = rlccXGB, t.TempDir(), artifact.HandlerNone, 1000
		r, err := Compile(opt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verify.Mismatches != 0 {
			t.Fatalf("%d mismatches", r.Verify.Mismatches)
		}
		return r
	}
	// planned is fit's chosen candidate in a plan.
	planned := func(t *testing.T, b artifact.BuildInfo) artifact.FormCandidate {
		t.Helper()
		i := slices.IndexFunc(b.Candidates, func(c artifact.FormCandidate) bool { return c.Chosen })
		if i < 0 {
			t.Fatalf("no candidate chosen: %+v", b)
		}
		if c := b.Candidates[i]; c.Form != b.Form {
			t.Errorf("chosen %+v, but the plan's form is %s", c, b.Form)
		}
		return b.Candidates[i]
	}
	// chosen is the chosen candidate of a whole compile, whose firmware is the one fit chose.
	chosen := func(t *testing.T, r *artifact.CompileReport) artifact.FormCandidate {
		t.Helper()
		c := planned(t, r.Build)
		if c.WCETCycles != r.Budget.WCETCycles || c.TextBytes != r.CodeBytes || c.RodataBytes != r.RodataBytes {
			t.Errorf("chosen %+v, but built %s with WCET %d, .text %d, .rodata %d", c, r.Build.Form, r.Budget.WCETCycles, r.CodeBytes, r.RodataBytes)
		}
		return c
	}
	least := func(t *testing.T, b artifact.BuildInfo) {
		t.Helper()
		c := planned(t, b)
		m := b.Memory
		for _, o := range b.Candidates {
			if o.NotBuilt != "" {
				continue
			}
			if fits := o.TextBytes <= m.TextBytes && o.RodataBytes <= m.RodataBytes; fits != o.Fits {
				t.Errorf("%+v: fits %v within %+v", o, o.Fits, m)
			}
			if o.Fits && o.WCETCycles < c.WCETCycles {
				t.Errorf("chose %+v over the cheaper %+v", c, o)
			}
		}
		if !c.Fits {
			t.Errorf("chose %+v, which does not fit", c)
		}
	}

	r := compile(t, CompileOptions{})
	least(t, r.Build)
	first := chosen(t, r)
	if first.Form != "rank" || len(r.Build.Candidates) < 3 || r.Build.Candidates[0].Form != "branch" || r.Build.Memory.RodataBytes != 262144 ||
		!strings.HasPrefix(r.Build.Memory.RodataSource, "profile dpa: assumption") {
		t.Errorf("by default: %+v", r.Build)
	}

	// The other budgets' compiles are independent of each other: they run in parallel. Where
	// only the choice is checked, they run the stages up to fit (fitted).
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t)
		})
	}

	// Below the cheapest form's tables, another form is chosen, within the limit.
	run("max-rodata", func(t *testing.T) {
		b := fitted(t, CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, MaxRodata: first.RodataBytes - 1})
		least(t, b)
		if c := planned(t, b); c.RodataBytes >= first.RodataBytes || c.WCETCycles < first.WCETCycles || b.Memory.RodataSource != "--max-rodata" {
			t.Errorf("under --max-rodata %d: chose %+v", first.RodataBytes-1, c)
		}
	})

	// No rank layout fits 4 KiB of tables: nested if/else is the only candidate, built once
	// with nothing to compare.
	run("max-rodata-4k", func(t *testing.T) {
		b := fitted(t, CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, MaxRodata: 4096})
		if len(b.Candidates) != 0 || b.Form != "branch" {
			t.Errorf("under 4 KiB of .rodata: %+v", b)
		}
	})

	// Nested if/else is over 4 KiB of code: a rank form is chosen.
	run("max-text-4k", func(t *testing.T) {
		b := fitted(t, CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, MaxText: 4096})
		least(t, b)
		if c := planned(t, b); c.Form != "rank" {
			t.Errorf("under 4 KiB of .text: chose %+v", c)
		}
	})

	// Nothing fits 256 bytes of code: refused once the forms are measured, before verify, in
	// one line with the bytes; --force builds and verifies the least WCET, and still fails.
	overMemory := func(t *testing.T, opt CompileOptions, stage, want string) *artifact.CompileReport {
		t.Helper()
		opt.Model, opt.Out, opt.Handler, opt.Vectors = rlccXGB, t.TempDir(), artifact.HandlerNone, 1000
		r, err := Compile(opt)
		var oe *artifact.OverMemoryError
		var ce *budget.CheckError
		if !errors.As(err, &oe) || !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%+v: error %v, want an over-memory check containing %q", opt, err, want)
		}
		if r == nil || r.Failure == nil || r.Failure.Stage != stage || r.Failure.Kind != "over_memory" || r.Failure.Message != err.Error() {
			t.Fatalf("%+v: report %+v, want an over_memory failure at %s", opt, r, stage)
		}
		return r
	}
	run("max-text-256", func(t *testing.T) {
		r := overMemory(t, CompileOptions{MaxText: 256}, "fit", "no code form fits the memory budget: the least WCET's, the rank form, has .text ")
		if r.Verify.Vectors != 0 || r.Firmware != "" {
			t.Errorf("over every budget: built or verified %+v", r)
		}
	})
	run("max-text-256-force", func(t *testing.T) {
		r := overMemory(t, CompileOptions{MaxText: 256, Force: true}, "budget", "over the 256-byte budget (--max-text) (built with --force)")
		if c := chosen(t, r); c.Fits || c.WCETCycles != first.WCETCycles || r.Verify.Vectors == 0 || r.Verify.Mismatches != 0 ||
			!slices.ContainsFunc(r.Notes, func(n string) bool {
				return strings.HasPrefix(n, "built with --force: no code form fits the memory budget")
			}) {
			t.Errorf("over every budget with --force: chose %+v, notes %q", c, r.Notes)
		}
	})
	// One candidate is held to the budget too: nested if/else is over 4 KiB of code.
	run("branch-max-text-4k", func(t *testing.T) {
		r := overMemory(t, CompileOptions{Form: "branch", MaxText: 4096}, "build", "the branch form's firmware has .text ")
		if r.Verify.Vectors != 0 || r.CodeBytes <= 4096 {
			t.Errorf("--form branch within 4 KiB: %+v", r)
		}
	})

	// --form restricts the candidates.
	run("branch", func(t *testing.T) {
		b := fitted(t, CompileOptions{Model: rlccXGB, Handler: artifact.HandlerNone, Form: "branch"})
		if len(b.Candidates) != 0 || b.Form != "branch" {
			t.Errorf("--form branch: %+v", b)
		}
	})
	if _, err := Compile(CompileOptions{Model: rlccXGB, Out: t.TempDir(), Form: "leafy"}); err == nil || !strings.Contains(err.Error(), `unknown form "leafy"`) {
		t.Errorf("--form leafy: %v", err)
	}
}

// fitted runs a compile's stages up to fit (load, quantize, fit) on opt: fit's plan.
func fitted(t *testing.T, opt CompileOptions) artifact.BuildInfo {
	t.Helper()
	return stagesTo(t, opt, "fit").plan
}

// stagesTo runs a compile's stages on opt, up to and including the one named last, into a
// fresh directory: the compilation, with the artifacts of those stages.
func stagesTo(t *testing.T, opt CompileOptions, last string) *compilation {
	t.Helper()
	c := newCompilation(opt)
	c.dir = t.TempDir()
	t.Cleanup(func() {
		c.speculation.stop()
		if c.formsDir != "" {
			os.RemoveAll(c.formsDir)
		}
	})
	for _, s := range compileStages {
		if err := s.run(c); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.name == last {
			return c
		}
	}
	t.Fatalf("no stage %s", last)
	return nil
}

// rankDominates holds on real ensembles: every rank layout it lets fit skip, built anyway,
// costs more cycles than the layout that dominates it (the shipped ensemble and one trained
// with another seed).
func TestRankDominanceHolds(t *testing.T) {
	t.Parallel()
	p, err := fwsim.LookupProfile("")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{rlccXGB, "../testdata/models/rlcc_xgb_seed2.json"} {
		c := stagesTo(t, CompileOptions{Model: m, Handler: artifact.HandlerRLCC}, "quantize")
		f := &fitter{in: c.fitInput(), planned: &planned{}}
		f.choosePlan()
		f.lowerBound(p)
		limit := f.memoryBudget(p)
		cs, err := f.candidates(c.Policy.(*quantize.TreeIR), limit)
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		for i, cand := range cs {
			if cand.rank != nil {
				ranks = append(ranks, i)
			}
		}
		builds, err := f.costCandidates(cs, p, t.TempDir(), ranks, nil)
		if err != nil {
			t.Fatal(err)
		}
		pairs := 0
		for ka, a := range ranks {
			for kb, b := range ranks {
				if !rankDominates(cs[a].rank, cs[b].rank) {
					continue
				}
				pairs++
				if wa, wb := builds[ka].wcet.WCETCycles, builds[kb].wcet.WCETCycles; wa >= wb {
					t.Errorf("%s: %s (WCET %d) dominates %s (WCET %d)", m, cs[a].detail, wa, cs[b].detail, wb)
				}
			}
		}
		if pairs == 0 {
			t.Errorf("%s: no rank layout of %d dominates another: nothing checked", m, len(ranks))
		}
	}
}
