package compiler

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/prove"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/verify"
)

// The compile's stages, as data, and the typed artifact each hands on to the next.

// stage is one pass of the compile over the compilation's artifacts. Its name is what
// report.json's stage_times, a failure report's stage, the manifest's verdicts and the tests'
// atStage hook call it.
type stage struct {
	name string
	run  func(*compilation) error
}

// compileStages are the compile's stages, in order (run walks them); a target other than
// nicc's own adds its stage after them (targetStages).
var compileStages = []stage{
	{"load", (*compilation).load},
	{"quantize", func(c *compilation) error { return c.Quantize() }},
	{"fit", func(c *compilation) error {
		var err error
		c.planned, err = fitStage(c.fitInput())
		c.Notes = append(c.Notes, c.planned.notes...)
		return err
	}},
	{"emit", func(c *compilation) (err error) {
		c.emitted, err = emitStage(c.emitInput())
		return err
	}},
	{"build", func(c *compilation) (err error) {
		c.built, err = buildStage(c.buildInput())
		return err
	}},
	{"verify", (*compilation).verifyStage},
	{"budget", func(c *compilation) (err error) {
		c.budgeted, err = budgetStage(c.budgetInput())
		return err
	}},
}

// targetStages are the stages of the targets whose firmware a compile builds beside nicc's
// own (CompileOptions.SDK), each run after compileStages.
var targetStages = map[target.Target]stage{doca.Target: docaStage}

// docaStage emits, builds, verifies and bounds the DOCA target's firmware: runDOCA
// on what the stages before it made. Its files join the compile's, its vectors the budget's.
var docaStage = stage{"doca", func(c *compilation) error {
	var err error
	c.doca, err = runDOCA(c.docaInput())
	c.files = slices.Sorted(slices.Values(append(c.files, c.doca.files...)))
	if v := c.doca.vectors; v != nil {
		c.vectorFiles = append(c.vectorFiles, *v)
	}
	return err
}}

// proveStage proves CompileOptions.Require on the golden model, each counterexample run on the
// firmware in fwsim: one property not proven is a failed check.
var proveStage = stage{"prove", func(c *compilation) error {
	if c.Handler != artifact.HandlerRLCC {
		return fmt.Errorf("--require: the properties are the RL-CC handler's, and this compile has none")
	}
	in := prove.Input{Policy: c.Policy, Params: c.Params, Layout: c.Layout(), Names: c.Float.Inputs}
	if err := in.LoadFirmware(c.elf, c.opt.Core); err != nil {
		return err
	}
	r, err := prove.Run(in, c.opt.Require)
	if err != nil {
		return err
	}
	c.proved = r
	if err := r.Gate(); err != nil {
		return &budget.CheckError{Err: fmt.Errorf("--require: %w", err)}
	}
	return nil
}}

// newCompilation is a compilation under opt with no artifact yet: each is empty until its
// stage runs.
func newCompilation(opt CompileOptions) *compilation {
	c := &compilation{opt: opt, planned: &planned{}, emitted: &emitted{}, built: &built{}, budgeted: &budgeted{}}
	c.Model = golden.New(opt.goldenOptions())
	return c
}

// goldenOptions are what the load and quantize stages read of o.
func (o *CompileOptions) goldenOptions() golden.Options {
	return golden.Options{Model: o.Model, Format: o.Format, Inputs: o.Inputs, Handler: o.Handler, Params: o.Params,
		ParamSources: o.ParamSources, DOCA: o.SDK == doca.Target, Ranges: o.Ranges, Predictions: o.Predictions, Int8: o.Int8, Seed: o.Seed}
}

// planned is the fit stage's artifact: the bound, the memory budget and the code form chosen.
type planned struct {
	bound *artifact.LowerBound
	plan  artifact.BuildInfo // code form and optimisation level (choosePlan), with the candidates
	// memory is the .text and .rodata every firmware must fit, whatever its form (fit).
	memory   artifact.MemoryBudget
	form     codegen.Form // the form codegen prints
	rank     *quantize.RankLayout
	products codegen.Products // an LSTM's table form's product tables (nil: codegen.AllRows)
	// rankGroups are a tree ensemble's rank-form groupings (rankGroupings), worked out once for
	// the fit bound and the candidates.
	rankGroups [][][]int
	// chosenBuild is the chosen form as chooseForm built it (nil when there was no choice), in
	// formsDir, which the compile removes when it ends.
	chosenBuild *formBuild
	formsDir    string
	// speculation is the host builds fit started ahead (speculator), of the chosen form or
	// stopped; the compile stops it before it removes formsDir.
	speculation *speculation
	notes       []string // what fit adds to the report's notes (an overrun built with --force)
}

// emitted is the emit stage's artifact: what it wrote and what each file must hold.
type emitted struct {
	files []string // written into dir, sorted
	// expect is what each source nicc writes must hold outside its comments, by its path in
	// dir: the render with neutral names for the policy and the handler (see emitStage).
	expect map[string][]byte
	// sourcesHash is hashSources of the policy and handler C, for the report's golden model.
	sourcesHash string
}

// built is the build stage's artifact: the firmware and the two host builds.
type built struct {
	elf, hostBin, ubsan string
	// fromFit says elf is fit's chosen build (planned.chosenBuild), copied, not built again.
	fromFit bool
}

// budgeted is the budget stage's artifact.
type budgeted struct {
	budget      *budget.Report
	policy      *budget.Report         // the model alone, inside the RL-CC firmware
	vectorFiles []artifact.VectorsInfo // the measured calls, written for nicc budget
}

// verifyStage runs the same vectors through the golden model, both host builds and fwsim,
// batch by batch, and fails when any differ or the UBSan build reports anything.
func (c *compilation) verifyStage() error {
	var err error
	c.verify, err = verify.Run(verify.Input{Ctx: c.ctx, Model: c.Float, Policy: c.Policy, Handler: c.Handler, Params: c.Params, Layout: c.Layout(),
		Rows: c.Rows, ELF: c.elf, HostBin: c.hostBin, UBSan: c.ubsan, Vectors: c.opt.Vectors, Seed: c.opt.Seed,
		Core: c.opt.Core, HostCC: c.opt.HostCC, Progress: func(done, total int) { c.progress("verify", done, total) }})
	return err
}
