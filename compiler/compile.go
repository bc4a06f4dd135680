// Package compiler orchestrates nicc's stages for the CLI: loading a model in any supported
// format, evaluating rows (with the float model, or with a compile's firmware in fwsim beside
// its rebuilt golden model), budgeting a firmware ELF, compiling a tree ensemble, an integer MLP
// or an integer LSTM into verified firmware (quantize, fit, emit with its checks, build, verify,
// budget, report), distilling a teacher into trees, and diffing float against integer.
// docs/ARCHITECTURE.md describes the pipeline.
package compiler

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/prove"
	"github.com/nicc-dev/nicc/student"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/verify"
)

// DefaultVectors is how many calls verify compares when CompileOptions.Vectors is 0.
const DefaultVectors = 100_000

// Host compiler flags: the strict build the outputs are compared on, and the sanitized one.
var (
	HostFlags = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"}
	// The sanitized build is at -O1 (OptO1, after the strict build's level): the checks are
	// the same at any level, and gcc optimises the instrumented code in less time (the LSTM's
	// handler: 5 s against 7-9 s at -O2; the rank trees': 0.37 s against 0.53 s); verify
	// compares it with the -O2 build.
	UBSanFlags = append([]string{"-fsanitize=undefined", "-fno-sanitize-recover=all"}, OptO1...)
	// FirmwareWarnFlags go to nicsdk.Build after nicsdk.FirmwareFlags.
	FirmwareWarnFlags = []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"}
)

// ProgressFunc is told how far a long stage is: done of total steps. It is called with done
// 0 when the stage starts and done == total when it ends.
type ProgressFunc func(stage string, done, total int)

// CompileOptions say what nicc compile does.
type CompileOptions struct {
	Model  string            // the model file
	Format *model.FileFormat // its format; nil detects it
	// Inputs rename the model's inputs after loading (nil keeps its own names): see LoadModelAs.
	Inputs []string
	Out    string // output directory, created if missing

	Handler artifact.Handler
	// Params are the RL-CC handler's parameters: those ParamSources names (the flags set),
	// over the model file's, over the defaults; without ParamSources, Params whole (the zero
	// value: the model file's over the defaults).
	Params       nicsdk.Params
	ParamSources artifact.ParamSources

	// Require are properties the compile must prove (prove.Run on the golden model, with the
	// firmware run on each counterexample): one not proven fails the compile.
	Require []prove.Property

	Core   string        // core profile; "" is fwsim.DefaultProfile
	Budget time.Duration // 0 is Default
	// ThreadsSharing is the hardware threads sharing the core's pipeline; 0 is the
	// profile's own count (see Options).
	ThreadsSharing int

	// Vectors is the least number of calls verify compares among golden, host C and fwsim;
	// 0 is DefaultVectors.
	Vectors int
	// Seed seeds the vector sampler (the same seed gives the same vectors).
	Seed uint64

	// Ranges is a CSV or TSV file of sample rows, one value per model input or a header
	// naming every input: the rows are verify vectors and fidelity samples, and under
	// HandlerNone each feature's range covers its column (the RL-CC handler's ranges are
	// nicsdk's; its rows are clamped to them).
	Ranges string
	// Predictions is a file of the source tool's own outputs on the Ranges rows, one value
	// per line or a table whose last column is the output (a reference CSV with the inputs
	// first): the report then gives the firmware's error against them.
	Predictions string

	// HostCC is the host C compiler; "" is "gcc".
	HostCC string

	Progress ProgressFunc

	// Int8, when set, compiles a dense network as an integer MLP (nicc compile --target int)
	// instead of a tree ensemble.
	Int8 *golden.Int8Options

	// Force builds a model that is otherwise refused before it is verified: one whose lower
	// bound (LowerBound) is over the budget or the core's memory, or whose code form is over
	// the memory budget (every candidate, or the firmware built). The compile still fails
	// when the firmware it built and verified is over the time or the memory budget.
	Force bool

	// Form restricts the code form to one of codegen's (a tree ensemble's branch, walk or
	// rank, an LSTM's branch or table); "" chooses by cost (chooseForm). MaxText and MaxRodata, when not 0, replace the core
	// profile's memory budget that choice is made within.
	Form               string
	MaxText, MaxRodata uint64

	// SDK is the device API the firmware is written for: nil or abi.Target, nicc's own
	// (nicc_on_event) alone; doca.Target adds a DOCA PCC device source around the same policy
	// (compiler/doca.go), with its stage (targetStages).
	SDK target.Target

	// Student, when set, is a model distilled for this compile (nicc compile --target
	// trees): compile writes it into Out as StudentFile and compiles it in place of Model.
	Student *model.Model
	// Distilled says where Student came from: its teacher and the trees' fidelity against it
	// (report.json's fidelity_teacher).
	Distilled *artifact.DistilledFrom

	// tamper, for tests, edits the emitted sources before they are built; docaTamper the
	// DOCA target's. atStage, for tests, is called before each stage runs, and before the
	// "report" and the "commit" that renames the new directory into place.
	tamper, docaTamper func(dir string) error
	atStage            func(stage string)
}

// compilation is one run of the pipeline: the options, and the artifact each stage hands on
// (compileStages): loaded, quantized, planned, emitted, built, the verify report, budgeted and
// the DOCA target's docaOutput. A stage reads the artifacts of the stages before it.
type compilation struct {
	opt CompileOptions
	ctx context.Context // nil: never cancelled
	// dir is where the compile writes: the fresh directory beside opt.Out (StageOut), renamed
	// into its place at the end. modelFile is where load reads the model, when not opt.Model.
	dir, modelFile string

	*golden.Model
	*planned
	*emitted
	*built
	verify *verify.Result
	*budgeted
	doca   *docaOutput   // the DOCA target's (doca.Target); nil without it
	proved *prove.Report // CompileOptions.Require's proof; nil without it

	times        []artifact.StageTime // the stages run so far, each timed
	passedStages []string
}

// Compile runs the pipeline: load → quantize → fit → emit → build → verify → budget → report. It
// writes the C, the ELF and report.json into opt.Out and returns the report. Bad input (an
// unreadable or unsupported model, a model that does not fit the handler or the flow
// context, ranges that cannot represent a threshold) is an error, with no report. A failed
// check (a mismatch, undefined behaviour, over budget) is a *CheckError returned with the
// report, which is written too and says in Failure what failed. A model whose lower bound is
// over the budget or the core's memory is refused before emit with a *TooBigError (a
// *CheckError) and no report, unless opt.Force.
//
// Everything is written into a fresh directory beside opt.Out (StageOut), which replaces
// opt.Out whole once report.json is written; without a report, opt.Out is left as it was.
func Compile(opt CompileOptions) (*artifact.CompileReport, error) {
	return CompileContext(context.Background(), opt)
}

// CompileContext is Compile, stopped when ctx is done: the fresh directory is removed and
// opt.Out left as it was (or not created).
func CompileContext(ctx context.Context, opt CompileOptions) (*artifact.CompileReport, error) {
	c := newCompilation(opt)
	c.ctx = ctx
	if c.opt.Vectors == 0 {
		c.opt.Vectors = DefaultVectors
	}
	if c.opt.Vectors < 0 {
		return nil, fmt.Errorf("vectors %d: want a positive count", c.opt.Vectors)
	}
	if err := artifact.CheckOut(c.opt.Out); err != nil {
		return nil, err
	}
	if _, err := fwsim.LookupProfile(c.opt.Core); err != nil {
		return nil, err
	}
	if t := c.opt.ThreadsSharing; t < 0 || t > 1024 {
		return nil, fmt.Errorf("threads sharing %d: want 1 to 1024", t)
	}
	if c.opt.Budget < 0 {
		return nil, fmt.Errorf("budget %v is not positive", c.opt.Budget)
	}
	if _, err := codegen.ParseForm(c.opt.Form); c.opt.Form != "" && err != nil {
		return nil, err
	}
	if c.opt.HostCC == "" {
		c.opt.HostCC = "gcc"
	}
	if err := c.inputsOutside(); err != nil {
		return nil, err
	}
	st, err := artifact.StageOut(c.opt.Out)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	defer func() {
		c.speculation.stop()
		if c.formsDir != "" {
			os.RemoveAll(c.formsDir)
		}
	}()
	c.dir = st.Dir
	r, err := c.run()
	c.hook("commit")
	if ctx.Err() != nil {
		what := "left as it was"
		if !st.Existed {
			what = "not created"
		}
		return nil, fmt.Errorf("compile interrupted: %s %s", c.opt.Out, what)
	}
	if r == nil {
		return nil, c.named(err)
	}
	if cerr := st.Commit(); cerr != nil {
		return nil, fmt.Errorf("%s: putting the new compile in place: %w", c.opt.Out, cerr)
	}
	return r, c.named(err)
}

// run runs the stages into c.dir and writes the report.
func (c *compilation) run() (*artifact.CompileReport, error) {
	if s := c.opt.Student; s != nil {
		c.modelFile = filepath.Join(c.dir, artifact.StudentFile)
		if err := artifact.WriteModel(c.modelFile, s); err != nil {
			return nil, err
		}
		c.opt.Model, c.opt.Format = filepath.Join(c.opt.Out, artifact.StudentFile), &model.NativeFormat
		c.Model.Opt = c.opt.goldenOptions()
	}
	stages := compileStages
	if s, ok := targetStages[c.opt.SDK]; ok {
		stages = append(slices.Clip(stages), s)
	}
	if len(c.opt.Require) > 0 {
		stages = append(slices.Clip(stages), proveStage)
	}
	for _, s := range stages {
		if err := c.hook(s.name); err != nil {
			return nil, err
		}
		start := time.Now()
		err := s.run(c)
		c.times = append(c.times, artifact.StageTime{Stage: s.name, Seconds: time.Since(start).Seconds()})
		var big *TooBigError
		var ce *budget.CheckError
		if errors.As(err, &ce) && !errors.As(err, &big) {
			if err := c.hook("report"); err != nil {
				return nil, err
			}
			return c.failed(s.name, err)
		}
		if err != nil {
			return nil, err
		}
		c.passedStages = append(c.passedStages, s.name)
		if s.name == "build" && !c.opt.Force {
			if err := c.checkMemory(); err != nil {
				return c.failed(s.name, err)
			}
		}
	}
	if err := c.hook("report"); err != nil {
		return nil, err
	}
	return c.report()
}

// hook calls the tests' atStage and says whether the compile has been cancelled.
func (c *compilation) hook(stage string) error {
	if c.opt.atStage != nil {
		c.opt.atStage(stage)
	}
	return c.context().Err()
}

// context is the compile's context.
func (c *compilation) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// inputsOutside refuses an input file inside opt.Out, which compile replaces whole.
func (c *compilation) inputsOutside() error {
	out, err := filepath.Abs(c.opt.Out)
	if err != nil {
		return err
	}
	files := [][2]string{{"the model", c.opt.Model}, {"--ranges", c.opt.Ranges}, {"--predictions", c.opt.Predictions}}
	if c.opt.Int8 != nil {
		files = append(files, [2]string{"--calib", c.opt.Int8.Calib})
	}
	for _, f := range files {
		if f[1] == "" {
			continue
		}
		abs, err := filepath.Abs(f[1])
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(out, abs); err == nil && filepath.IsLocal(rel) {
			return fmt.Errorf("%s %s lies inside --out %s, which compile replaces whole: move it out first", f[0], f[1], c.opt.Out)
		}
	}
	return nil
}

// named is err with the fresh directory's path written as opt.Out, where its files end up.
func (c *compilation) named(err error) error {
	if err == nil || c.dir == "" || !strings.Contains(err.Error(), c.dir) {
		return err
	}
	return &namedError{err, strings.ReplaceAll(err.Error(), c.dir, c.opt.Out)}
}

// namedError is an error with another message.
type namedError struct {
	err error
	msg string
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }

func (c *compilation) progress(stage string, done, total int) {
	if c.opt.Progress != nil {
		c.opt.Progress(stage, done, total)
	}
}

// load reads the model and checks that the chosen handler can run it: tree ensembles only,
// no wider than the handler's inputs, state within the flow context. It is the load stage
// (loadModel) on the compilation's options.
func (c *compilation) load() error { return c.Model.Load(c.modelFile) }

// budgetInput is what the budget stage reads: the firmware build made, the calls verify
// measured, fit's static analysis of it (when it is fit's build), and the options.
type budgetInput struct {
	dir     string // the compile's directory, where the vector files are written
	elf     string // the firmware in dir
	out     string // where it ends up (CompileOptions.Out)
	entry   string // the firmware's entry point
	core    string
	budget  time.Duration
	threads int
	measure []budget.Vector
	// boundPolicy, under the RL-CC handler, bounds EntryPolicy too, measured on policy (the
	// policy's own calls).
	boundPolicy bool
	policy      []budget.Vector
	bounds      map[string]*wcet.Report // by entry; nil unless the ELF is fit's build
}

func (c *compilation) budgetInput() budgetInput {
	entry, _ := c.entry()
	in := budgetInput{dir: c.dir, elf: c.elf, out: c.opt.Out, entry: entry, core: c.opt.Core, budget: c.opt.Budget,
		threads: c.opt.ThreadsSharing, measure: c.verify.Measure}
	if c.Handler == artifact.HandlerRLCC {
		in.boundPolicy, in.policy = true, c.verify.MeasurePolicy
	}
	if c.fromFit {
		in.bounds = c.chosenBuild.bounds
	}
	return in
}

// budgetStage bounds the firmware's entry (and, under the RL-CC handler, the policy alone) on
// the core, measures it on the verify calls that ran longest, and writes those calls beside
// it. On an error, what it did so far is in the result.
func budgetStage(in budgetInput) (*budgeted, error) {
	out := &budgeted{}
	analyze := func(entry, file string, vs []budget.Vector) (*budget.Report, error) {
		vf, err := writeVectors(in.dir, file, artifact.FirmwareFile, entry, vs)
		if err != nil {
			return nil, err
		}
		out.vectorFiles = append(out.vectorFiles, vf)
		return budget.Analyze(budget.Options{ELF: in.elf, Entry: entry, Core: in.core, Budget: in.budget,
			ThreadsSharing: in.threads, Vectors: vs, VectorsFile: "verify vectors", Bound: in.bounds[entry]})
	}
	r, err := analyze(in.entry, artifact.VectorsFile, in.measure)
	if err != nil {
		return out, err
	}
	r.ELF = filepath.Join(in.out, artifact.FirmwareFile) // where it ends up
	out.budget = r
	if in.boundPolicy {
		if out.policy, err = analyze(artifact.EntryPolicy, artifact.PolicyVectorsFile, in.policy); err != nil {
			return out, err
		}
	}
	return out, nil
}

// writeVectors writes the calls measured on entry of the ELF elf (the longest verify calls and
// an even sample of the rest, at most 2048) into dir as name, in the order they run: nicc
// budget on the same ELF, entry and file measures the same cycles.
func writeVectors(dir, name, elf, entry string, vs []budget.Vector) (artifact.VectorsInfo, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %d calls of %s: the longest of nicc compile's verify calls and an even sample of the rest.\n", len(vs), entry)
	fmt.Fprintf(&b, "# nicc budget %s --entry %s --vectors %s re-runs them.\n", elf, entry, name)
	if err := budget.WriteVectors(&b, vs); err != nil {
		return artifact.VectorsInfo{}, err
	}
	return artifact.VectorsInfo{Entry: entry, File: name, Vectors: len(vs)}, artifact.WriteOut(filepath.Join(dir, name), b.Bytes())
}

// textBytes is the size of the ELF's .text and .rodata sections.
func textBytes(path string) (text, rodata uint64, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	for _, s := range f.Sections {
		switch {
		case s.Name == ".text":
			text += s.Size
		case strings.HasPrefix(s.Name, ".rodata") || strings.HasPrefix(s.Name, ".srodata"):
			rodata += s.Size
		}
	}
	return text, rodata, nil
}

// UseStudent sets what a compile of r's student carries over from the distillation: the
// student, the teacher and the trees' fidelity against it, and the RL-CC parameters the
// distillation ran under (with their sources), so that compile does not resolve them again
// from the student (whose file carries none).
func (opt *CompileOptions) UseStudent(r *student.DistillReport) {
	opt.Model, opt.Student = "", r.Model
	opt.Distilled = &artifact.DistilledFrom{Teacher: r.Teacher, TeacherKind: r.TeacherKind, States: r.States, Train: r.Train, HeldOut: r.HeldOut}
	if p := r.Params; p != nil {
		opt.Params, opt.ParamSources = p.Fixed(), p.Sources
	}
}
