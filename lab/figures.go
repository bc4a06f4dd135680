package lab

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/diff"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/plot"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/train"
)

// The lab's reports as plot's plain series, and the figures written as base.png and
// base.svg.

// writeFigure writes f into dir (made unless it exists) as base.png and base.svg, and returns
// the two paths.
func writeFigure(dir, base string, f *plot.Figure) ([]string, error) {
	if err := artifact.OutDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, base)
	var files []string
	for _, out := range []struct {
		file string
		data []byte
	}{{path + ".png", f.PNG}, {path + ".svg", f.SVG}} {
		if err := artifact.WriteOut(out.file, out.data); err != nil {
			return nil, err
		}
		files = append(files, out.file)
	}
	return files, nil
}

// SimPlotBase is the name, without extension, of nicc sim --plot's figure.
const SimPlotBase = "sim_rates_queue"

// simTraceNs is how often --plot samples the run: 500 samples over it, at least 1 µs apart.
func simTraceNs(durationNs int64) int64 { return max(durationNs/500, 1000) }

// plotSim draws the run's trace into dir: each traced flow's rate over time above, the
// deepest receiver queue below, the measurement window shaded in both. It returns the files.
func plotSim(r *SimReport, dir string) ([]string, error) {
	tr := r.Trace
	if tr == nil {
		return nil, fmt.Errorf("internal error: no trace to plot")
	}
	t := plot.SimTrace{Scenario: r.Scenario, Controller: r.Controller, TimesUs: tr.TimesUs, Flows: tr.Flows, FlowGbps: tr.FlowGbps,
		QueueKB: tr.QueueKB, NotDrawn: r.Flows - len(tr.Flows), WindowStartUs: r.WindowStartUs}
	if d := r.DOCA; d != nil && d.SetAtNs > 0 {
		t.SetAtUs = float64(d.SetAtNs) / 1000
	}
	f, err := plot.Sim(t)
	if err != nil {
		return nil, err
	}
	files, err := writeFigure(dir, SimPlotBase, f)
	if err != nil || r.FCT == nil {
		return files, err
	}
	s := plot.Slowdowns{Title: fmt.Sprintf("%s: %s", r.Scenario, r.Controller)}
	for _, b := range r.FCT.Buckets {
		s.Buckets = append(s.Buckets, fmt.Sprintf("%s (%d)", b.Label, b.Flows))
		s.Mean, s.P99 = append(s.Mean, b.MeanSlowdown), append(s.P99, b.P99Slowdown)
	}
	if f, err = plot.FCT(s); err != nil {
		return nil, err
	}
	more, err := writeFigure(dir, SimFCTPlotBase, f)
	return append(files, more...), err
}

// SimFCTPlotBase is the name, without extension, of a workload's slowdown figure (--plot).
const SimFCTPlotBase = "sim_fct"

// ClosedLoopPlotBase is the closed-loop figure's file name without its extension.
const ClosedLoopPlotBase = "diff_closed_loop"

// closedLoopMetrics are the closed-loop figure's panels.
var closedLoopMetrics = []struct {
	name string
	get  func(*netsim.Result) float64
}{
	{"SU (%)", func(x *netsim.Result) float64 { return x.Utilization }},
	{"FR (min/max × 100)", func(x *netsim.Result) float64 { return x.Fairness }},
	{"normalised goodput", func(x *netsim.Result) float64 { return x.Goodput }},
	{"QL mean (µs)", func(x *netsim.Result) float64 { return x.QueueMeanUs }},
	{"QL p99 (µs)", func(x *netsim.Result) float64 { return x.QueueP99Us }},
	{"DR (Gb/s)", func(x *netsim.Result) float64 { return x.DropGbps }},
}

// plotClosedLoop draws one panel a figure (SU, FR, mean and p99 queue latency, drops,
// goodput), the teacher's bar beside the compile's for every scenario.
func plotClosedLoop(r *ClosedLoopReport, dir string) ([]string, error) {
	b := plot.Bars{Title: fmt.Sprintf("closed loop: %s (teacher) against %s", filepath.Base(r.Teacher), filepath.Base(r.Against))}
	for _, row := range r.Rows {
		b.Names = append(b.Names, fmt.Sprintf("%s %d", row.Scenario, row.Flows))
	}
	for _, m := range closedLoopMetrics {
		p := plot.BarPanel{Name: m.name}
		for _, row := range r.Rows {
			p.Teacher, p.Compiled = append(p.Teacher, m.get(row.Teacher)), append(p.Compiled, m.get(row.Compiled))
		}
		b.Panels = append(b.Panels, p)
	}
	f, err := plot.ClosedLoop(b)
	if err != nil {
		return nil, err
	}
	return writeFigure(dir, ClosedLoopPlotBase, f)
}

// budgetCycles is how many cycles of the entry fit b's budget on its core: budget × clock
// / threads sharing the pipeline (Budget's Fits is WCET cycles ≤ this).
func budgetCycles(b *budget.Report) float64 {
	return b.BudgetMicros * 1e-6 * b.Core.ClockHz / float64(b.Core.ThreadsSharing)
}

// budgetText is "2 µs = 3600 cycles (1.8 GHz, 1 thread sharing)".
func (r *SweepReport) budgetText() string {
	threads := "1 thread"
	if r.ThreadsSharing != 1 {
		threads = fmt.Sprintf("%d threads", r.ThreadsSharing)
	}
	return fmt.Sprintf("%s µs = %.0f cycles (%g GHz, %s sharing)", strconv.FormatFloat(r.BudgetMicros, 'f', -1, 64), math.Floor(r.BudgetCycles), r.ClockHz/1e9, threads)
}

// sweepSeries is r as the sweep figure draws it: every configuration built, the front.
func sweepSeries(r *SweepReport) plot.Sweep {
	s := plot.Sweep{Title: fmt.Sprintf("distilled students of %s (%d states): held-out RMSE vs WCET", filepath.Base(r.Teacher), r.Samples),
		XLabel: fmt.Sprintf("WCET of %s on %s (cycles)", r.Entry, r.Core), BudgetCycles: r.BudgetCycles, BudgetText: "budget " + r.budgetText()}
	for _, pt := range r.Points {
		if pt.Refused != "" {
			continue // not built: no WCET
		}
		label := fmt.Sprintf("%d×%d", pt.Trees, pt.Depth)
		if !pt.Fits {
			label += " over budget"
		}
		s.Points = append(s.Points, plot.Point{X: float64(pt.WCETCycles), Y: pt.HeldOut.RMSE, Label: label})
	}
	for _, j := range r.Front {
		s.Front = append(s.Front, plot.Point{X: float64(r.Points[j].WCETCycles), Y: r.Points[j].HeldOut.RMSE})
	}
	return s
}

// plotSweep draws held-out RMSE against WCET cycles into r.PNG and r.SVG (in one directory,
// named base.png and base.svg); with every configuration refused there is nothing to draw,
// and both are "".
func plotSweep(r *SweepReport) error {
	f, err := plot.SweepFigure(sweepSeries(r))
	if err != nil {
		return err
	}
	if f == nil {
		r.PNG, r.SVG = "", ""
		return nil
	}
	_, err = writeFigure(filepath.Dir(r.PNG), filepath.Base(r.PNG[:len(r.PNG)-len(".png")]), f)
	return err
}

// plotTrainCurve draws the reward curve into base .png and .svg (plot.TrainCurve).
func plotTrainCurve(curve []train.Point, dir, base string) ([]string, error) {
	var c plot.Curve
	for _, pt := range curve {
		c.Steps, c.MeanAbs, c.SteadyAbs = append(c.Steps, pt.Step), append(c.MeanAbs, pt.MeanAbs), append(c.SteadyAbs, pt.SteadyAbs)
	}
	f, err := plot.TrainCurve(c)
	if err != nil {
		return nil, err
	}
	return writeFigure(dir, base, f)
}

// Files nicc diff writes into its --out directory (each as .png and .svg).
const (
	DiffHeatmaps  = "diff_heatmaps"  // the action over (a_{t-1}, o_t): float, student, difference
	DiffHistogram = "diff_histogram" // histograms of Δy and |Δy| with its percentiles
)

// Diff is nicc diff (diff.Diff) with its figures: the heatmaps (an RL-CC teacher's only)
// and the Δy histograms into opt.Out, when set.
func Diff(opt diff.DiffOptions) (*diff.DiffReport, error) {
	out := opt.Out
	opt.Out = ""
	r, err := diff.Diff(opt)
	if err != nil || out == "" {
		return r, err
	}
	if err := artifact.OutDir(out); err != nil {
		return nil, err
	}
	v := r.Figures
	if v.RLCC {
		files, err := writeFigureOr(plot.HeatmapFigure(heatmaps(r)))(out, DiffHeatmaps)
		if err != nil {
			return nil, err
		}
		r.Plots = append(r.Plots, files...)
	}
	h := plot.Histograms{Student: v.Headline, Rows: r.Stats.Rows, DY: v.DY, Marks: []plot.Mark{{Name: "p50", Value: r.Stats.P50},
		{Name: "p90", Value: r.Stats.P90}, {Name: "p99", Value: r.Stats.P99}, {Name: "p99.9", Value: r.Stats.P999}, {Name: "max", Value: r.Stats.MaxAbs}}}
	files, err := writeFigureOr(plot.HistogramFigure(h))(out, DiffHistogram)
	if err != nil {
		return nil, err
	}
	r.Plots = append(r.Plots, files...)
	if intStudent := opt.Against == "" || opt.Against == diff.AgainstInt || opt.Against == diff.AgainstInt8; intStudent && r.TeacherKind == "lstm" && v.RLCC {
		// an integer LSTM student (Diff takes "" and int8 as int)
		r.Notes = append(r.Notes, "LSTM heatmaps: each cell is one step from the zero recurrent state, float and integer alike")
	}
	return r, nil
}

// writeFigureOr writes a figure drawn without an error.
func writeFigureOr(f *plot.Figure, err error) func(dir, base string) ([]string, error) {
	return func(dir, base string) ([]string, error) {
		if err != nil {
			return nil, err
		}
		return writeFigure(dir, base, f)
	}
}

// evalGrid is f over p's grid (rlcc.HeatState.Axes), at the RL-CC input of each cell.
func evalGrid(f func([]float64) float64, p rlcc.HeatState, l nicsdk.Layout) *plot.Grid {
	g := &plot.Grid{Z: make([][]float64, rlcc.HeatRows)}
	g.Xs, g.Ys = p.Axes()
	for r := range rlcc.HeatRows {
		g.Z[r] = make([]float64, rlcc.HeatCols)
		for c := range rlcc.HeatCols {
			g.Z[r][c] = f(p.InputIn(l, g.Xs[c], g.Ys[r]))
		}
	}
	return g
}

// heatmaps are the heatmap figure's grids for each previous state of rlcc.HeatStates: the
// float teacher's y, the student's y and Δy = student − teacher, where Δy compares the
// teacher at the input the student sees (an integer student's row quantized and clamped to
// its formats), as the statistics do; and its title and notes.
func heatmaps(r *diff.DiffReport) plot.Heatmaps {
	v := r.Figures
	at := func(x []float64) []float64 { return x }
	if v.Repr != nil {
		at = v.Repr
	}
	seen := func(x []float64) float64 { return v.Teacher(at(x)) }
	l := v.Layout.OrDefault()
	h := plot.Heatmaps{Student: v.Headline, Title: fmt.Sprintf("nicc diff: %s (%s) against %s — the policy's output over (a_{t-1}, o_t) for three previous states (a_{t-2}, o_{t-1})",
		filepath.Base(r.Teacher), r.TeacherKind, v.Headline)}
	for _, p := range rlcc.HeatStates(v.Sampler) {
		row := plot.HeatRow{Name: p.Name, Float: evalGrid(v.Teacher, p, l), Student: evalGrid(v.Student, p, l), Diff: evalGrid(seen, p, l)}
		for i, z := range row.Diff.Z {
			for j := range z {
				z[j] = row.Student.Z[i][j] - z[j]
			}
		}
		h.Rows = append(h.Rows, row)
	}
	s := v.Sampler
	h.Notes = []string{
		"y maps to the rate multiplier 1 + 0.2y (y ≥ 0) or 1/(1 − 0.2y) (y < 0): |y| ≤ 0.025 holds the rate within ±0.5%.",
		fmt.Sprintf("o_t = (max(RTT_t/baseRTT − β, 0)·√rate_t − target)·scale; T = target·scale = %g·%g = %g: o_t = −T on an idle link, and grows with the queue.", s.Target, s.Scale, s.T()),
		fmt.Sprintf("The grid spans the distillation sampler's ranges: a_{t-1} on [%g, %g], o_t on [−T, 100T].", s.AMin, s.AMax),
	}
	if v.Repr != nil {
		h.Notes = append(h.Notes, "The integer student sees its inputs on the handler's Q16 grid (a_{t-1} below 0.8333, the smallest multiplier, as 0.8333); Δy compares the teacher at that input, as the statistics do.")
	}
	if r.TeacherKind == "lstm" {
		h.Notes = append(h.Notes, "LSTM: each cell is one step from the zero recurrent state, float and student alike.")
	}
	return h
}
