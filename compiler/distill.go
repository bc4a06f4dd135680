package compiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// DefaultSamples is how many states nicc distill draws when DistillOptions.Samples is 0.
const DefaultSamples = 200_000

// DefaultTrain are nicc distill's training defaults, which its flags, compile --target trees
// and diff --against trees start from. Measured by scripts/bench_distill.py on three RL-CC
// teachers (2M states, 10 and 20 trees of depth 4): the joint leaf refit (kept only when it
// lowers the held-out RMSE) takes 14 to 24% off plain boosting's held-out RMSE at learning
// rate 1; boosting at 0.5 before it takes 3 to 21% more off at 10 trees, and from 6% more
// to 6% less at 20 (the refit undoes the shrinkage; shrunk rounds leave the later trees more
// to split on). 200000 states are enough: 0.9M or 2M change these trees' RMSE by a few %,
// either way.
var DefaultTrain = distill.Options{Trees: 10, Depth: 4, LearningRate: 0.5, L2: 1, MinLeaf: 1, Refit: true}

// TrainOptions are the boosted-tree trainer's (distill.Options): trees, depth, rate and the
// rest, as the CLI's distill flags set them.
type TrainOptions = distill.Options

// MLPOptions are an integer MLP's widths and scales (quantize.MLPOptions), as compile's
// --weight-bits and --act-bits set them.
type MLPOptions = quantize.MLPOptions

// DistillOptions say what nicc distill does: which states, which teacher, which trees.
type DistillOptions struct {
	Teacher string            // the teacher's model file
	Format  *model.FileFormat // its format; nil detects it
	// Inputs rename the teacher's inputs after loading (nil keeps its own): see LoadModelAs.
	Inputs []string
	// Handler says whether the teacher is an RL-CC policy: HandlerRLCC puts the thresholds on
	// the RL-CC grid (GridName ""), and a sweep compiles its students under that handler;
	// HandlerAuto decides by the input names as compile does.
	Handler Handler
	// Params are the RL-CC parameters the sampler (T = target·scale) and the grid use: those
	// ParamSources names over the teacher file's over the defaults (see CompileOptions.Params).
	Params       nicsdk.Params
	ParamSources ParamSources

	// Samples is how many states the sampler draws (0: DefaultSamples); with States, how
	// many of the recorded states are used (0: all).
	Samples int
	// HeldOut is the fraction of states kept out of training to measure the student on.
	HeldOut float64
	// States is a CSV of recorded states; "" samples RL-CC's state space (rlcc.Sampler
	// under Params).
	States string
	// HeldOutStates is a CSV of states to measure the student on instead of a HeldOut
	// fraction of the training states: every training state is then trained on.
	HeldOutStates string
	Seed          uint64

	// Train are the trainer's options; Grid and Progress are filled in by GridName and the
	// caller's Progress.
	Train distill.Options
	// GridName is "rlcc" (thresholds on nicsdk's Q16 grid of the RL-CC inputs), "none"
	// (unrestricted thresholds) or "" (rlcc under the RL-CC handler, none otherwise).
	GridName string
}

// DistillReport is what nicc distill found.
type DistillReport struct {
	Teacher     string      `json:"teacher"`
	TeacherKind string      `json:"teacher_kind"`
	Student     string      `json:"student,omitempty"` // the file written, if any
	States      string      `json:"states"`            // where the states came from
	Samples     int         `json:"samples"`
	Grid        string      `json:"grid"`
	Trees       int         `json:"trees"`
	Depth       int         `json:"depth"`
	Oblivious   bool        `json:"oblivious"`
	Train       distill.Fit `json:"train"`
	HeldOut     distill.Fit `json:"held_out"`
	// LearningRate and L2 are the trainer's; Refit says what became of the joint leaf refit:
	// RefitKept (then BoostHeldOutRMSE is the held-out RMSE boosting alone had),
	// RefitNotKept (it did not lower the held-out RMSE) or RefitOff.
	LearningRate     float64 `json:"learning_rate"`
	L2               float64 `json:"l2"`
	Refit            string  `json:"refit"`
	BoostHeldOutRMSE float64 `json:"boost_held_out_rmse,omitempty"`
	LabelTime        Seconds `json:"label_seconds"`
	TrainTime        Seconds `json:"train_seconds"`
	// Params are the RL-CC parameters the sampler or the grid used (nil when neither did).
	Params *RLCCParams  `json:"rlcc_params,omitempty"`
	Notes  []string     `json:"notes,omitempty"`
	Model  *model.Model `json:"-"`
}

// DistilledFrom is where a compile's student (CompileOptions.Student) came from: the
// network teacher, and how closely the trees follow it on the distillation's states. The
// firmware computes the trees exactly (verify); this is its error against the network.
type DistilledFrom struct {
	Teacher     string      `json:"teacher"`
	TeacherKind string      `json:"teacher_kind"`
	States      string      `json:"states"`
	Train       distill.Fit `json:"train"`
	HeldOut     distill.Fit `json:"held_out"`
}

// ForCompile sets what a compile of r's student carries over from the distillation: the
// student, the teacher and the trees' fidelity against it, and the RL-CC parameters the
// distillation ran under (with their sources), so that compile does not resolve them again
// from the student (whose file carries none).
func (r *DistillReport) ForCompile(opt *CompileOptions) {
	opt.Model, opt.Student = "", r.Model
	opt.Distilled = &DistilledFrom{Teacher: r.Teacher, TeacherKind: r.TeacherKind, States: r.States, Train: r.Train, HeldOut: r.HeldOut}
	if p := r.Params; p != nil {
		opt.Params, opt.ParamSources = p.fixed(), p.Sources
	}
}

// What became of the joint leaf refit (DistillReport.Refit).
const (
	RefitKept    = "kept"
	RefitNotKept = "not kept"
	RefitOff     = "off"
)

// Seconds is a duration that marshals as seconds.
type Seconds time.Duration

// MarshalJSON writes s in seconds.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(s).Seconds(), 'f', 3, 64)), nil
}

// UnmarshalJSON reads seconds.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*s = Seconds(time.Duration(v * float64(time.Second)))
	return nil
}

func (s Seconds) String() string { return time.Duration(s).Round(time.Millisecond).String() }

// distillation is the teacher, its labelled states, and the split, shared by every
// configuration of a sweep.
type distillation struct {
	opt          DistillOptions
	teacher      *model.Model
	states       string
	grid         string
	params       nicsdk.Params
	paramSrc     ParamSources
	layout       nicsdk.Layout // the RL-CC window the teacher reads (its names' layout, else the default)
	rlccUsed     bool          // the RL-CC sampler or grid ran: the report gives the parameters
	notes        []string      // for the report
	train, valid *distill.Dataset
	samples      int
	labelTime    time.Duration
}

// prepare loads the teacher, draws and labels the states and splits them.
// labelled draws n states from s (0: all a recorded file has), in the teacher's input order,
// labelled with its output. A header naming every teacher input puts the columns in the
// teacher's order; otherwise the columns are the inputs by position.
func labelled(t *model.Model, teacherFile string, s distill.Sampler, n int, seed uint64) (*distill.Dataset, error) {
	data, err := s.Sample(n, seed)
	if err != nil {
		return nil, err
	}
	if data.Names != nil && namesAll(data.Names, t.Inputs) {
		x := make([][]float64, len(t.Inputs))
		for i, name := range t.Inputs {
			x[i] = data.X[slices.Index(data.Names, name)]
		}
		data.X = x
	}
	data.Names = slices.Clone(t.Inputs)
	if err := distill.Label(t, data); err != nil {
		return nil, fmt.Errorf("%s: %w", teacherFile, err)
	}
	return data, nil
}

func prepare(opt DistillOptions) (*distillation, error) {
	if err := checkLimits(opt.Train.Trees, opt.Train.Depth); err != nil {
		return nil, err
	}
	if !(opt.HeldOut > 0 && opt.HeldOut < 1) {
		return nil, fmt.Errorf("held-out fraction %v: want more than 0 and less than 1", opt.HeldOut)
	}
	if opt.Samples < 0 {
		return nil, fmt.Errorf("samples %d: want a positive count", opt.Samples)
	}
	lp, err := loadPolicy(opt.Teacher, opt.Format, opt.Inputs, opt.Handler, "distill it with --handler none, or ")
	if err != nil {
		return nil, err
	}
	t := lp.m
	params, src, err := resolveParams(opt.Teacher, t, opt.Params, opt.ParamSources)
	if err != nil {
		return nil, err
	}
	if t.NumOutputs() != 1 {
		return nil, fmt.Errorf("%s: teacher %s has %d outputs; distill takes a single-output policy", opt.Teacher, t.Name, t.NumOutputs())
	}
	d := &distillation{opt: opt, teacher: t, params: params, paramSrc: src, layout: nicsdk.DefaultLayout}
	if lp.layout != nil {
		d.layout = lp.layout.Layout()
	}
	var s distill.Sampler
	n := opt.Samples
	if opt.States != "" {
		ss, err := distill.LoadStates(opt.States)
		if err != nil {
			return nil, err
		}
		s, d.states = ss, opt.States
	} else {
		s, d.states, d.rlccUsed = distill.RLCCSampler{Sampler: rlcc.SamplerFor(params), Layout: d.layout}, "RL-CC sampler", true
		if n == 0 {
			n = DefaultSamples
		}
	}
	if w := s.Inputs(); w != t.NumInputs() {
		return nil, fmt.Errorf("%s: teacher %s takes %d inputs, the %s gives states of %d values", opt.Teacher, t.Name, t.NumInputs(), d.states, w)
	}
	// Refused before the states are drawn: the estimate is of the states used (a CSV's are
	// read already, and bounded by the file).
	used, from := n, fmt.Sprintf("samples %d", n)
	if ss, ok := s.(*distill.StatesSampler); ok {
		if all := len(ss.States.X[0]); n == 0 || n > all {
			used = all
		}
		from = opt.States
	}
	if err := checkDistillMemory(from, used, t.NumInputs(), opt.Train); err != nil {
		return nil, err
	}
	start := time.Now()
	data, err := labelled(t, opt.Teacher, s, n, opt.Seed)
	if err != nil {
		return nil, err
	}
	d.samples = data.Rows()
	if opt.HeldOutStates != "" {
		hs, err := distill.LoadStates(opt.HeldOutStates)
		if err != nil {
			return nil, err
		}
		if w := hs.Inputs(); w != t.NumInputs() {
			return nil, fmt.Errorf("%s: teacher %s takes %d inputs, %s gives states of %d values", opt.Teacher, t.Name, t.NumInputs(), opt.HeldOutStates, w)
		}
		if err := checkDistillMemory(opt.HeldOutStates, used+len(hs.States.X[0]), t.NumInputs(), opt.Train); err != nil {
			return nil, err
		}
		if d.valid, err = labelled(t, opt.Teacher, hs, 0, opt.Seed); err != nil {
			return nil, err
		}
		d.train = data
		d.labelTime = time.Since(start)
	} else {
		d.labelTime = time.Since(start)
		if d.samples < 2 {
			return nil, fmt.Errorf("%s: %d states; want at least 2 to hold some out", d.states, d.samples)
		}
		d.train, d.valid = data.Split(opt.HeldOut, opt.Seed)
		if d.train.Rows() == 0 || d.valid.Rows() == 0 {
			return nil, fmt.Errorf("held-out fraction %v of %d states leaves %d to train on and %d to hold out", opt.HeldOut, d.samples, d.train.Rows(), d.valid.Rows())
		}
	}
	switch d.grid = opt.GridName; d.grid {
	case "":
		d.grid = "none"
		switch {
		case resolveHandler(opt.Handler, t.Inputs) == HandlerRLCC:
			d.grid = "rlcc"
		case opt.Handler == HandlerAuto && t.NumInputs() == nicsdk.RLCCInputs:
			d.notes = append(d.notes, fmt.Sprintf("grid none: the teacher's inputs (%s) are not named in an RL-CC layout (%s); %s puts the thresholds on the RL-CC Q16 grid",
				strings.Join(t.Inputs, ", "), rlcc.NameList, rlccHint))
		}
	case "rlcc":
		if t.NumInputs() != d.layout.Inputs() {
			return nil, fmt.Errorf("%s: --grid rlcc is the grid of the %d RL-CC inputs (%v); teacher %s takes %d", opt.Teacher, d.layout.Inputs(), d.layout, t.Name, t.NumInputs())
		}
	case "none":
	default:
		return nil, fmt.Errorf("unknown grid %q (want rlcc or none)", opt.GridName)
	}
	if d.grid == "rlcc" {
		if t.NumInputs() != d.layout.Inputs() {
			return nil, fmt.Errorf("%s: the RL-CC handler takes %d inputs (%v); teacher %s takes %d", opt.Teacher, d.layout.Inputs(), d.layout, t.Name, t.NumInputs())
		}
		d.rlccUsed = true
	}
	return d, nil
}

func checkLimits(trees, depth int) error {
	if trees < 1 || trees > 10_000 {
		return fmt.Errorf("trees %d: want 1 to 10000", trees)
	}
	if depth < 1 || depth > 16 {
		return fmt.Errorf("depth %d: want 1 to 16", depth)
	}
	return nil
}

// student trains one configuration and measures it.
func (d *distillation) student(o distill.Options) (*DistillReport, error) {
	if err := checkLimits(o.Trees, o.Depth); err != nil {
		return nil, err
	}
	if d.grid == "rlcc" {
		o.Grid = quantize.GridInputs(rlcc.Grid(d.params, d.layout))
	}
	if o.Seed == 0 {
		o.Seed = d.opt.Seed
	}
	start := time.Now()
	m, tr, err := distill.Train(d.train, d.valid, o)
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	refit, boost := RefitOff, 0.0
	switch {
	case tr.RefitApplied:
		refit, boost = RefitKept, tr.BoostHeldOutRMSE
	case tr.Refit:
		refit = RefitNotKept
	}
	m.Name = fmt.Sprintf("%s_trees%dx%d", d.teacher.Name, o.Trees, o.Depth)
	doc := fmt.Sprintf("Distilled by nicc from %s (%s) on %d states (%s, seed %d): %d trees of depth %d, grid %s",
		d.teacher.Name, filepath.Base(d.opt.Teacher), d.samples, d.states, d.opt.Seed, o.Trees, o.Depth, d.grid)
	if o.Oblivious {
		doc += ", oblivious"
	}
	m.Doc = fmt.Sprintf("%s, learning rate %g, L2 %g, refit %s.", doc, tr.LearningRate, o.L2, refit)
	return &DistillReport{
		Teacher: d.opt.Teacher, TeacherKind: d.teacher.Kind().String(), States: d.states, Samples: d.samples,
		Grid: d.grid, Trees: o.Trees, Depth: o.Depth, Oblivious: o.Oblivious,
		LearningRate: tr.LearningRate, L2: o.L2, Refit: refit, BoostHeldOutRMSE: boost,
		Train: distill.Measure(m, d.train), HeldOut: distill.Measure(m, d.valid),
		LabelTime: Seconds(d.labelTime), TrainTime: Seconds(took), Model: m,
		Params: d.reportParams(), Notes: d.notes,
	}, nil
}

// studentHandler is the handler a sweep compiles its students under: RL-CC when they were
// trained on its grid (whatever the teacher's input names), else chosen by the names.
func (d *distillation) studentHandler() Handler {
	if d.grid == "rlcc" {
		return HandlerRLCC
	}
	return d.opt.Handler
}

// reportParams are the RL-CC parameters for the report, when the sampler or the grid used them.
func (d *distillation) reportParams() *RLCCParams {
	if !d.rlccUsed {
		return nil
	}
	return newRLCCParams(d.params).withSources(d.paramSrc)
}

// Distill trains a tree student of the teacher and, with out set, writes it as a native
// JSON model. Bad input (an unreadable teacher, a teacher whose width differs from the
// states', NaN teacher outputs, an empty or malformed states CSV, impossible limits) is an
// error.
func Distill(opt DistillOptions, out string) (*DistillReport, error) {
	d, err := prepare(opt)
	if err != nil {
		return nil, err
	}
	r, err := d.student(opt.Train)
	if err != nil {
		return nil, err
	}
	if out != "" {
		if err := writeModel(out, r.Model); err != nil {
			return nil, err
		}
		r.Student = out
	}
	return r, nil
}

// WriteText prints the report for a terminal.
func (r *DistillReport) WriteText(w io.Writer) error {
	obl := ""
	if r.Oblivious {
		obl = " oblivious"
	}
	_, err := textf(w, `teacher    %s (%s)
states     %d from the %s, grid %s
student    %d%s trees of depth %d, learning rate %g, L2 %g
train      RMSE %.6f  max abs %.6f  direction disagreement %.3f%% (%d states)
held-out   RMSE %.6f  max abs %.6f  direction disagreement %.3f%% (%d states)
time       label %s, train %s
`, r.Teacher, r.TeacherKind, r.Samples, r.States, r.Grid, r.Trees, obl, r.Depth, r.LearningRate, r.L2,
		r.Train.RMSE, r.Train.MaxAbs, 100*r.Train.Disagree, r.Train.Rows,
		r.HeldOut.RMSE, r.HeldOut.MaxAbs, 100*r.HeldOut.Disagree, r.HeldOut.Rows,
		r.LabelTime, r.TrainTime)
	if err == nil {
		_, err = textf(w, "refit      %s\n", r.refitText())
	}
	if err == nil && r.Params != nil {
		_, err = textf(w, "rl-cc      %s\n", r.Params)
	}
	for _, n := range r.Notes {
		if err == nil {
			_, err = textf(w, "note       %s\n", n)
		}
	}
	if err == nil && r.Student != "" {
		_, err = textf(w, "wrote      %s\n", r.Student)
	}
	return err
}

// refitText says what became of the joint leaf refit.
func (r *DistillReport) refitText() string {
	switch r.Refit {
	case RefitKept:
		return fmt.Sprintf("kept: all leaves refit jointly, held-out RMSE %.6f with boosting's leaves", r.BoostHeldOutRMSE)
	case RefitNotKept:
		return "not kept: the jointly refit leaves did not lower the held-out RMSE"
	}
	return "off"
}

// SweepRange is the values one sweep dimension takes.
type SweepRange struct{ Lo, Hi, Step int }

// Values lists the range: Lo, Lo+Step, …, and Hi.
func (s SweepRange) Values() []int {
	var v []int
	for x := s.Lo; x < s.Hi; x += s.Step {
		v = append(v, x)
	}
	return append(v, s.Hi)
}

// DefaultSweepStep is each dimension's step when the sweep spec gives none.
var DefaultSweepStep = map[string]int{"trees": 4, "depth": 1}

// ParseSweep reads "trees=4..20,depth=2..6": each of trees and depth a value, or LO..HI with
// an optional :STEP (trees step 4, depth step 1 by default; HI is always included). A
// dimension left out keeps the value def gives it.
func ParseSweep(spec string, defTrees, defDepth int) (trees, depth SweepRange, err error) {
	trees, depth = SweepRange{defTrees, defTrees, 1}, SweepRange{defDepth, defDepth, 1}
	if strings.TrimSpace(spec) == "" {
		return trees, depth, fmt.Errorf("empty sweep: want e.g. trees=4..20,depth=2..6")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return trees, depth, fmt.Errorf("sweep %q: %q is not NAME=LO..HI", spec, part)
		}
		var dst *SweepRange
		switch name {
		case "trees":
			dst = &trees
		case "depth":
			dst = &depth
		default:
			return trees, depth, fmt.Errorf("sweep %q: unknown dimension %q (want trees or depth)", spec, name)
		}
		if seen[name] {
			return trees, depth, fmt.Errorf("sweep %q: %s given twice", spec, name)
		}
		seen[name] = true
		r := SweepRange{Step: DefaultSweepStep[name]}
		rng, step, hasStep := strings.Cut(val, ":")
		lo, hi, isRange := strings.Cut(rng, "..")
		if !isRange {
			hi = lo
		}
		var e1, e2, e3 error
		r.Lo, e1 = strconv.Atoi(strings.TrimSpace(lo))
		r.Hi, e2 = strconv.Atoi(strings.TrimSpace(hi))
		if hasStep {
			r.Step, e3 = strconv.Atoi(strings.TrimSpace(step))
		}
		if e1 != nil || e2 != nil || e3 != nil || r.Lo < 1 || r.Hi < r.Lo || r.Step < 1 {
			return trees, depth, fmt.Errorf("sweep %q: %s=%s: want LO..HI[:STEP] with 1 <= LO <= HI and STEP >= 1", spec, name, val)
		}
		if name == "trees" && r.Hi > 10_000 || name == "depth" && r.Hi > 16 {
			return trees, depth, fmt.Errorf("sweep %q: %s up to %d is too many", spec, name, r.Hi)
		}
		*dst = r
	}
	return trees, depth, nil
}

// SweepOptions say what nicc distill --sweep does.
type SweepOptions struct {
	DistillOptions
	Trees, Depth SweepRange
	Out          string        // directory: one subdirectory per configuration, sweep.json, sweep.png, sweep.svg
	Core         string        // core profile; "" is the default
	Budget       time.Duration // each configuration's time budget; 0 is DefaultBudget
	// Vectors is how many calls verify compares for each configuration (0: 2000).
	Vectors int
	HostCC  string
	// Force builds configurations whose lower bound does not fit (CompileOptions.Force);
	// without it they are refused and listed as such.
	Force bool
	// Progress is told each configuration as it starts (done of total).
	Progress func(done, total int, trees, depth int)
}

// SweepPoint is one configuration of a sweep.
type SweepPoint struct {
	Trees      int         `json:"trees"`
	Depth      int         `json:"depth"`
	Train      distill.Fit `json:"train"`
	HeldOut    distill.Fit `json:"held_out"`
	TrainTime  Seconds     `json:"train_seconds"`
	WCETCycles uint64      `json:"wcet_cycles"`                  // the firmware entry (the whole RL-CC handler under rlcc)
	WCETMicros float64     `json:"wcet_us"`                      // with the core's threads sharing and clock
	PolicyWCET uint64      `json:"policy_wcet_cycles,omitempty"` // the trees alone, inside the RL-CC firmware
	Verified   int         `json:"verified_vectors"`
	Mismatches int         `json:"mismatches"`
	Fits       bool        `json:"fits"`
	// Refused says why the configuration was not built: its lower bound is over the budget
	// or the core's memory (TooBigError). It has no WCET and is on no front.
	Refused string `json:"refused,omitempty"`
	Pareto  bool   `json:"pareto"`
	Dir     string `json:"dir"`
}

// SweepReport is what nicc distill --sweep found.
type SweepReport struct {
	Teacher string `json:"teacher"`
	States  string `json:"states"`
	Samples int    `json:"samples"`
	Grid    string `json:"grid"`
	Core    string `json:"core"`
	Entry   string `json:"entry"`
	// The time budget of one decision, and the most cycles of the entry that fit it on the
	// core: budget × clock / threads sharing the pipeline (a point fits when its WCET
	// cycles are at most BudgetCycles).
	BudgetMicros   float64      `json:"budget_us"`
	BudgetCycles   float64      `json:"budget_cycles"`
	ClockHz        float64      `json:"clock_hz"`
	ThreadsSharing int          `json:"threads_sharing"`
	Points         []SweepPoint `json:"points"`
	// Front are the indices into Points of the Pareto front of held-out RMSE against WCET
	// cycles, cheapest first.
	Front []int  `json:"pareto_front"`
	JSON  string `json:"json"`
	PNG   string `json:"png"`
	SVG   string `json:"svg"`
}

// Sweep distills the teacher at every (trees, depth) of the ranges on the same labelled
// states, compiles each student with the compile pipeline (quantize, emit, build, verify on
// Vectors calls, WCET on Core), and writes sweep.json and the Pareto plot into Out.
func Sweep(opt SweepOptions) (*SweepReport, error) {
	if opt.Out == "" {
		return nil, fmt.Errorf("sweep needs an output directory")
	}
	if opt.Vectors == 0 {
		opt.Vectors = 2000
	}
	// prepare checks the limits, and the memory, of the largest configuration.
	opt.DistillOptions.Train.Trees, opt.DistillOptions.Train.Depth = opt.Trees.Hi, opt.Depth.Hi
	d, err := prepare(opt.DistillOptions)
	if err != nil {
		return nil, err
	}
	if err := outDir(opt.Out); err != nil {
		return nil, err
	}
	rep := &SweepReport{Teacher: opt.Teacher, States: d.states, Samples: d.samples, Grid: d.grid, Core: opt.Core}
	total := len(opt.Trees.Values()) * len(opt.Depth.Values())
	for _, depth := range opt.Depth.Values() {
		for _, trees := range opt.Trees.Values() {
			if opt.Progress != nil {
				opt.Progress(len(rep.Points), total, trees, depth)
			}
			o := opt.Train
			o.Trees, o.Depth = trees, depth
			s, err := d.student(o)
			if err != nil {
				return nil, err
			}
			dir := filepath.Join(opt.Out, fmt.Sprintf("trees%d_depth%d", trees, depth))
			c, err := Compile(CompileOptions{Student: s.Model, Out: dir, Core: opt.Core, Budget: opt.Budget,
				Handler: d.studentHandler(), Params: d.params, ParamSources: d.paramSrc, Vectors: opt.Vectors, Seed: opt.Seed, HostCC: opt.HostCC, Force: opt.Force})
			p := SweepPoint{Trees: trees, Depth: depth, Train: s.Train, HeldOut: s.HeldOut, TrainTime: s.TrainTime, Dir: dir}
			var big *TooBigError
			switch {
			case errors.As(err, &big):
				p.Refused = big.Error()
				rep.Points = append(rep.Points, p)
				continue
			case err != nil && (c == nil || c.Budget == nil): // over budget is a point; any other failure stops the sweep
				return nil, fmt.Errorf("trees %d depth %d: %w", trees, depth, err)
			}
			p.WCETCycles, p.WCETMicros, p.Fits = c.Budget.WCETCycles, c.Budget.WCETMicros, c.Budget.Fits
			p.Verified, p.Mismatches = c.Verify.Vectors, c.Verify.Mismatches
			if c.PolicyAlone != nil {
				p.PolicyWCET = c.PolicyAlone.WCETCycles
			}
			rep.Entry, rep.Core = c.Budget.Entry, c.Budget.Core.Name
			rep.BudgetMicros, rep.ClockHz, rep.ThreadsSharing = c.Budget.BudgetMicros, c.Budget.Core.ClockHz, c.Budget.Core.ThreadsSharing
			rep.BudgetCycles = budgetCycles(c.Budget)
			rep.Points = append(rep.Points, p)
		}
	}
	rep.Front = ParetoFront(rep.Points)
	for _, i := range rep.Front {
		rep.Points[i].Pareto = true
	}
	rep.JSON = filepath.Join(opt.Out, "sweep.json")
	rep.PNG = filepath.Join(opt.Out, "sweep.png")
	rep.SVG = filepath.Join(opt.Out, "sweep.svg")
	if err := plotSweep(rep); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeOut(rep.JSON, append(b, '\n')); err != nil {
		return nil, err
	}
	return rep, nil
}

// ParetoFront returns the points no other point beats on both held-out RMSE and WCET cycles
// (at least as good on both and better on one), by WCET then RMSE; refused points (no WCET)
// are on no front.
func ParetoFront(pts []SweepPoint) []int {
	idx := make([]int, len(pts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := pts[a], pts[b]
		if pa.WCETCycles != pb.WCETCycles {
			return cmpU(pa.WCETCycles, pb.WCETCycles)
		}
		switch {
		case pa.HeldOut.RMSE < pb.HeldOut.RMSE:
			return -1
		case pa.HeldOut.RMSE > pb.HeldOut.RMSE:
			return 1
		}
		return 0
	})
	var front []int
	best := math.Inf(1)
	for _, i := range idx {
		if pts[i].Refused == "" && pts[i].HeldOut.RMSE < best {
			front = append(front, i)
			best = pts[i].HeldOut.RMSE
		}
	}
	return front
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteText prints the sweep's table and its Pareto front.
func (r *SweepReport) WriteText(w io.Writer) error {
	textf(w, "teacher %s, %d states from the %s, grid %s; WCET of %s on %s\n", r.Teacher, r.Samples, r.States, r.Grid, r.Entry, r.Core)
	textf(w, "budget %s\n", r.budgetText())
	textf(w, "WCET: of %s, the whole firmware entry; policy: of the trees alone, within it (0: not measured apart)\n\n", r.Entry)
	textf(w, "%5s %5s  %10s %10s %9s  %8s %8s %8s\n", "trees", "depth", "train RMSE", "held RMSE", "disagree", "WCET", "WCET", "policy")
	textf(w, "%5s %5s  %10s %10s %9s  %8s %8s %8s\n", "", "", "(y)", "(y)", "(%)", "(cycles)", "(µs)", "(cycles)")
	for _, p := range r.Points {
		mark := ""
		if p.Pareto {
			mark = "pareto"
		}
		if p.Mismatches != 0 {
			mark += fmt.Sprintf(" %d MISMATCHES", p.Mismatches)
		}
		switch {
		case p.Refused != "":
			mark += " refused before building (its lower bound does not fit; --force builds it)"
		case !p.Fits:
			mark += " over budget"
		}
		textf(w, "%5d %5d  %10.6f %10.6f %9.3f  %8d %8.3f %8d  %s\n", p.Trees, p.Depth, p.Train.RMSE, p.HeldOut.RMSE,
			100*p.HeldOut.Disagree, p.WCETCycles, p.WCETMicros, p.PolicyWCET, strings.TrimSpace(mark))
	}
	textf(w, "\nPareto front (held-out RMSE vs WCET cycles):\n")
	for _, i := range r.Front {
		p := r.Points[i]
		textf(w, "  %4d cycles (%.3f µs)  RMSE %.6f  trees %d depth %d\n", p.WCETCycles, p.WCETMicros, p.HeldOut.RMSE, p.Trees, p.Depth)
	}
	_, err := textf(w, "\nwrote %s, %s, %s\n", r.JSON, r.PNG, r.SVG)
	return err
}
