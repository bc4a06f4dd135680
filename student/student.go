package student

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/termtext"
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

// DistillOptions say what nicc distill does: which states, which teacher, which trees.
type DistillOptions struct {
	Teacher string            // the teacher's model file
	Format  *model.FileFormat // its format; nil detects it
	// Inputs rename the teacher's inputs after loading (nil keeps its own): see LoadModelAs.
	Inputs []string
	// Handler says whether the teacher is an RL-CC policy: HandlerRLCC puts the thresholds on
	// the RL-CC grid (GridName ""), and a sweep compiles its students under that handler;
	// HandlerAuto decides by the input names as compile does.
	Handler artifact.Handler
	// Params are the RL-CC parameters the sampler (T = target·scale) and the grid use: those
	// ParamSources names over the teacher file's over the defaults (see compiler.CompileOptions.Params).
	Params       nicsdk.Params
	ParamSources artifact.ParamSources

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
	LearningRate     float64          `json:"learning_rate"`
	L2               float64          `json:"l2"`
	Refit            string           `json:"refit"`
	BoostHeldOutRMSE float64          `json:"boost_held_out_rmse,omitempty"`
	LabelTime        artifact.Seconds `json:"label_seconds"`
	TrainTime        artifact.Seconds `json:"train_seconds"`
	// Params are the RL-CC parameters the sampler or the grid used (nil when neither did).
	Params *artifact.RLCCParams `json:"rlcc_params,omitempty"`
	Notes  []string             `json:"notes,omitempty"`
	Model  *model.Model         `json:"-"`
}

// What became of the joint leaf refit (DistillReport.Refit).
const (
	RefitKept    = "kept"
	RefitNotKept = "not kept"
	RefitOff     = "off"
)

// Distillation is the teacher, its labelled states, and the split, shared by every
// configuration of a sweep.
type Distillation struct {
	opt          DistillOptions
	teacher      *model.Model
	states       string
	grid         string
	params       nicsdk.Params
	paramSrc     artifact.ParamSources
	layout       nicsdk.Layout // the RL-CC window the teacher reads (its names' layout, else the default)
	rlccUsed     bool          // the RL-CC sampler or grid ran: the report gives the parameters
	notes        []string      // for the report
	train, valid *distill.Dataset
	samples      int
	labelTime    time.Duration
}

// labelled draws n states from s (0: all a recorded file has), in the teacher's input order,
// labelled with its output. A header naming every teacher input puts the columns in the
// teacher's order; otherwise the columns are the inputs by position.
func labelled(t *model.Model, teacherFile string, s distill.Sampler, n int, seed uint64) (*distill.Dataset, error) {
	data, err := s.Sample(n, seed)
	if err != nil {
		return nil, err
	}
	if data.Names != nil && golden.NamesAll(data.Names, t.Inputs) {
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

// Prepare loads the teacher, draws and labels the states and splits them.
func Prepare(opt DistillOptions) (*Distillation, error) {
	if err := checkLimits(opt.Train.Trees, opt.Train.Depth); err != nil {
		return nil, err
	}
	if !(opt.HeldOut > 0 && opt.HeldOut < 1) {
		return nil, fmt.Errorf("held-out fraction %v: want more than 0 and less than 1", opt.HeldOut)
	}
	if opt.Samples < 0 {
		return nil, fmt.Errorf("samples %d: want a positive count", opt.Samples)
	}
	lp, err := golden.LoadPolicy(opt.Teacher, opt.Format, opt.Inputs, opt.Handler, "distill it with --handler none, or ")
	if err != nil {
		return nil, err
	}
	t := lp.Model
	params, src, err := golden.ResolveParams(opt.Teacher, t, opt.Params, opt.ParamSources)
	if err != nil {
		return nil, err
	}
	if t.NumOutputs() != 1 {
		return nil, fmt.Errorf("%s: teacher %s has %d outputs; distill takes a single-output policy", opt.Teacher, t.Name, t.NumOutputs())
	}
	d := &Distillation{opt: opt, teacher: t, params: params, paramSrc: src, layout: nicsdk.DefaultLayout}
	if lp.Layout != nil {
		d.layout = lp.Layout.Layout()
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
	if err := memlimit.CheckDistill(from, used, t.NumInputs(), opt.Train); err != nil {
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
		if err := memlimit.CheckDistill(opt.HeldOutStates, used+len(hs.States.X[0]), t.NumInputs(), opt.Train); err != nil {
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
		case golden.ResolveHandler(opt.Handler, t.Inputs) == artifact.HandlerRLCC:
			d.grid = "rlcc"
		case opt.Handler == artifact.HandlerAuto && t.NumInputs() == nicsdk.RLCCInputs:
			d.notes = append(d.notes, fmt.Sprintf("grid none: the teacher's inputs (%s) are not named in an RL-CC layout (%s); %s puts the thresholds on the RL-CC Q16 grid",
				strings.Join(t.Inputs, ", "), rlcc.NameList, golden.RLCCHint))
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

// Student trains one configuration and measures it.
func (d *Distillation) Student(o distill.Options) (*DistillReport, error) {
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
		LabelTime: artifact.Seconds(d.labelTime), TrainTime: artifact.Seconds(took), Model: m,
		Params: d.reportParams(), Notes: d.notes,
	}, nil
}

// StudentHandler is the handler a sweep compiles its students under: RL-CC when they were
// trained on its grid (whatever the teacher's input names), else chosen by the names.
func (d *Distillation) StudentHandler() artifact.Handler {
	if d.grid == "rlcc" {
		return artifact.HandlerRLCC
	}
	return d.opt.Handler
}

// reportParams are the RL-CC parameters for the report, when the sampler or the grid used them.
func (d *Distillation) reportParams() *artifact.RLCCParams {
	if !d.rlccUsed {
		return nil
	}
	return artifact.NewRLCCParams(d.params).WithSources(d.paramSrc)
}

// Distill trains a tree student of the teacher and, with out set, writes it as a native
// JSON model. Bad input (an unreadable teacher, a teacher whose width differs from the
// states', NaN teacher outputs, an empty or malformed states CSV, impossible limits) is an
// error.
func Distill(opt DistillOptions, out string) (*DistillReport, error) {
	d, err := Prepare(opt)
	if err != nil {
		return nil, err
	}
	r, err := d.Student(opt.Train)
	if err != nil {
		return nil, err
	}
	if out != "" {
		if err := artifact.WriteModel(out, r.Model); err != nil {
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
	_, err := termtext.Printf(w, `teacher    %s (%s)
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
		_, err = termtext.Printf(w, "refit      %s\n", r.refitText())
	}
	if err == nil && r.Params != nil {
		_, err = termtext.Printf(w, "rl-cc      %s\n", r.Params)
	}
	for _, n := range r.Notes {
		if err == nil {
			_, err = termtext.Printf(w, "note       %s\n", n)
		}
	}
	if err == nil && r.Student != "" {
		_, err = termtext.Printf(w, "wrote      %s\n", r.Student)
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

// Params are the RL-CC parameters the distillation ran under, with their sources.
func (d *Distillation) Params() (nicsdk.Params, artifact.ParamSources) { return d.params, d.paramSrc }

// States, Samples and Grid say where the states came from, how many, and the thresholds' grid.
func (d *Distillation) States() string { return d.states }
func (d *Distillation) Samples() int   { return d.samples }
func (d *Distillation) Grid() string   { return d.grid }
