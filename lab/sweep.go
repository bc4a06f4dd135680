package lab

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

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/student"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/distill"
)

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
	student.DistillOptions
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
	Trees      int              `json:"trees"`
	Depth      int              `json:"depth"`
	Train      distill.Fit      `json:"train"`
	HeldOut    distill.Fit      `json:"held_out"`
	TrainTime  artifact.Seconds `json:"train_seconds"`
	WCETCycles uint64           `json:"wcet_cycles"`                  // the firmware entry (the whole RL-CC handler under rlcc)
	WCETMicros float64          `json:"wcet_us"`                      // with the core's threads sharing and clock
	PolicyWCET uint64           `json:"policy_wcet_cycles,omitempty"` // the trees alone, inside the RL-CC firmware
	Verified   int              `json:"verified_vectors"`
	Mismatches int              `json:"mismatches"`
	Fits       bool             `json:"fits"`
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
	d, err := student.Prepare(opt.DistillOptions)
	if err != nil {
		return nil, err
	}
	if err := artifact.OutDir(opt.Out); err != nil {
		return nil, err
	}
	rep := &SweepReport{Teacher: opt.Teacher, States: d.States(), Samples: d.Samples(), Grid: d.Grid(), Core: opt.Core}
	params, paramSrc := d.Params()
	total := len(opt.Trees.Values()) * len(opt.Depth.Values())
	for _, depth := range opt.Depth.Values() {
		for _, trees := range opt.Trees.Values() {
			if opt.Progress != nil {
				opt.Progress(len(rep.Points), total, trees, depth)
			}
			o := opt.Train
			o.Trees, o.Depth = trees, depth
			s, err := d.Student(o)
			if err != nil {
				return nil, err
			}
			dir := filepath.Join(opt.Out, fmt.Sprintf("trees%d_depth%d", trees, depth))
			c, err := compiler.Compile(compiler.CompileOptions{Student: s.Model, Out: dir, Core: opt.Core, Budget: opt.Budget,
				Handler: d.StudentHandler(), Params: params, ParamSources: paramSrc, Vectors: opt.Vectors, Seed: opt.Seed, HostCC: opt.HostCC, Force: opt.Force})
			p := SweepPoint{Trees: trees, Depth: depth, Train: s.Train, HeldOut: s.HeldOut, TrainTime: s.TrainTime, Dir: dir}
			var big *compiler.TooBigError
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
	if err := artifact.WriteOut(rep.JSON, append(b, '\n')); err != nil {
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
	termtext.Printf(w, "teacher %s, %d states from the %s, grid %s; WCET of %s on %s\n", r.Teacher, r.Samples, r.States, r.Grid, r.Entry, r.Core)
	termtext.Printf(w, "budget %s\n", r.budgetText())
	termtext.Printf(w, "WCET: of %s, the whole firmware entry; policy: of the trees alone, within it (0: not measured apart)\n\n", r.Entry)
	termtext.Printf(w, "%5s %5s  %10s %10s %9s  %8s %8s %8s\n", "trees", "depth", "train RMSE", "held RMSE", "disagree", "WCET", "WCET", "policy")
	termtext.Printf(w, "%5s %5s  %10s %10s %9s  %8s %8s %8s\n", "", "", "(y)", "(y)", "(%)", "(cycles)", "(µs)", "(cycles)")
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
		termtext.Printf(w, "%5d %5d  %10.6f %10.6f %9.3f  %8d %8.3f %8d  %s\n", p.Trees, p.Depth, p.Train.RMSE, p.HeldOut.RMSE,
			100*p.HeldOut.Disagree, p.WCETCycles, p.WCETMicros, p.PolicyWCET, strings.TrimSpace(mark))
	}
	termtext.Printf(w, "\nPareto front (held-out RMSE vs WCET cycles):\n")
	for _, i := range r.Front {
		p := r.Points[i]
		termtext.Printf(w, "  %4d cycles (%.3f µs)  RMSE %.6f  trees %d depth %d\n", p.WCETCycles, p.WCETMicros, p.HeldOut.RMSE, p.Trees, p.Depth)
	}
	_, err := termtext.Printf(w, "\nwrote %s, %s, %s\n", r.JSON, r.PNG, r.SVG)
	return err
}
