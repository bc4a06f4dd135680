package compiler

import (
	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// The lab's way in: what lab/ (sim and its controllers, closed-loop diff, sweep, eval, train
// glue) needs of the compile's unexported parts, as thin exported wrappers, in this one file.

// Firmware is the ELF a compile directory runs under s.
func (s SDK) Firmware() string { return s.firmware() }

// Distillation is a teacher with its labelled states, shared by every configuration of a
// sweep (prepare).
type Distillation struct{ d *distillation }

// PrepareDistill loads the teacher, draws and labels the states and splits them.
func PrepareDistill(opt DistillOptions) (*Distillation, error) {
	d, err := prepare(opt)
	if err != nil {
		return nil, err
	}
	return &Distillation{d}, nil
}

// Student trains one configuration on the shared states.
func (d *Distillation) Student(o TrainOptions) (*DistillReport, error) { return d.d.student(o) }

// StudentHandler is the handler the students compile under.
func (d *Distillation) StudentHandler() artifact.Handler { return d.d.studentHandler() }

// Params are the RL-CC parameters the distillation ran under, with their sources.
func (d *Distillation) Params() (nicsdk.Params, artifact.ParamSources) {
	return d.d.params, d.d.paramSrc
}

// States, Samples and Grid say where the states came from, how many, and the thresholds' grid.
func (d *Distillation) States() string { return d.d.states }
func (d *Distillation) Samples() int   { return d.d.samples }
func (d *Distillation) Grid() string   { return d.d.grid }

// DiffView is what an open-loop diff's figures are drawn from (lab.Diff).
type DiffView struct {
	RLCC             bool                      // the teacher takes an RL-CC window (heatmaps)
	Teacher, Student func(x []float64) float64 // y at a float row
	// Repr is a row as an integer student sees it (nil for a float student).
	Repr     func(x []float64) []float64
	Sampler  rlcc.Sampler  // the RL-CC state ranges under the parameters
	Layout   nicsdk.Layout // the window the heatmaps' states fill
	Headline string        // the student in a few words with its widths
	DY       []float64     // student − teacher, per row, sorted by |Δy|
}

// View is what r's figures are drawn from.
func (r *DiffReport) View() DiffView {
	return DiffView{RLCC: r.rlcc, Teacher: r.teacher, Student: r.student, Repr: r.repr, Sampler: r.sampler, Layout: r.layout,
		Headline: r.headline, DY: r.dy}
}
