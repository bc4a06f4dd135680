package lab

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
)

// ClosedLoopRun is one scenario of nicc diff --closed-loop: a nicc sim scenario and its flow
// count (many-to-one's flows, all-to-all's hosts, long-short's short flows).
type ClosedLoopRun struct {
	Scenario string `json:"scenario"`
	Flows    int    `json:"flows"`
}

func (r ClosedLoopRun) String() string { return fmt.Sprintf("%s:%d", r.Scenario, r.Flows) }

// DefaultClosedLoopRuns are the NIC paper's Table 2 (many-to-one at 8 … 2048 flows), all-to-all
// with 4 and 8 hosts and long-short with 2 short flows.
var DefaultClosedLoopRuns = []ClosedLoopRun{
	{"many-to-one", 8}, {"many-to-one", 64}, {"many-to-one", 512}, {"many-to-one", 1024}, {"many-to-one", 2048},
	{"all-to-all", 4}, {"all-to-all", 8}, {"long-short", 2},
}

// FormatClosedLoopRuns writes runs as --runs reads them.
func FormatClosedLoopRuns(runs []ClosedLoopRun) string {
	s := make([]string, len(runs))
	for i, r := range runs {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}

// ParseClosedLoopRuns reads --runs: SCENARIO:N items separated by commas.
func ParseClosedLoopRuns(s string) ([]ClosedLoopRun, error) {
	var runs []ClosedLoopRun
	for item := range strings.SplitSeq(s, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(item), ":")
		flows, err := strconv.Atoi(n)
		if !ok || err != nil || flows < 1 {
			return nil, fmt.Errorf("--runs item %q: want SCENARIO:N with N ≥ 1, e.g. many-to-one:64", item)
		}
		if _, err := simScenario(SimOptions{Scenario: name, Flows: flows}); err != nil {
			return nil, fmt.Errorf("--runs item %q: %w", item, err)
		}
		runs = append(runs, ClosedLoopRun{name, flows})
	}
	return runs, nil
}

// The default tolerances of nicc diff --closed-loop: the issue's, the NIC paper's Table 2
// scale (it saw ≤ 0.01 goodput and about 1% latency between its MLP and its trees).
const (
	DefaultMaxGoodputDiff = 0.02 // normalised goodput, absolute
	DefaultMaxLatencyDiff = 0.05 // mean queue latency, relative to the teacher's
	// DefaultLatencySlackUs passes a latency difference this small whatever the ratio: near an
	// empty queue 5% of the teacher's latency is less than one packet's serialization.
	DefaultLatencySlackUs = 0.05
)

// ClosedLoopOptions say what nicc diff --closed-loop compares: the float teacher and a
// compile of it, each deciding for every flow of the same scenarios, seeds and network.
type ClosedLoopOptions struct {
	Teacher string            // the float teacher's model file
	Format  *model.FileFormat // its format; nil detects it
	Inputs  []string          // renames the teacher's inputs
	Against string            // a compile output directory (compiled with --handler rlcc)
	Golden  bool              // the compile's integer model instead of its firmware in fwsim
	SDK     target.Target     // doca.Target: the compile's DOCA program instead of its firmware
	Runs    []ClosedLoopRun   // nil is DefaultClosedLoopRuns
	Net     netsim.Config     // the network and the run (duration, seed, ...)
	// LatencyNs fixes every decision's latency, teacher's and compile's; 0 gives the teacher
	// none and the firmware its measured cycles.
	LatencyNs int64
	// Tolerances; zero takes the defaults above.
	MaxGoodputDiff, MaxLatencyDiff, LatencySlackUs float64
	// Health are the absolute limits each side is judged by; nil is DefaultHealth.
	Health   *HealthLimits
	Out      string // the plot's directory; "" draws none
	Progress compiler.ProgressFunc
}

// ClosedLoopRow is one scenario: both runs' figures and whether the compile is within the
// tolerances of the teacher.
type ClosedLoopRow struct {
	ClosedLoopRun
	Teacher     *netsim.Result `json:"teacher"`
	Compiled    *netsim.Result `json:"compiled"`
	GoodputDiff float64        `json:"goodput_diff"`       // compiled − teacher
	LatencyDiff float64        `json:"latency_diff_ratio"` // (compiled − teacher) ÷ teacher, mean queue latency
	// TeacherHealth and CompiledHealth are each side's absolute verdict: a scenario where the
	// teacher is unhealthy does not pass, whatever the differences.
	TeacherHealth  *Health `json:"teacher_health"`
	CompiledHealth *Health `json:"compiled_health"`
	Pass           bool    `json:"pass"`
	Why            string  `json:"why,omitempty"` // what is out of tolerance
}

// ClosedLoopReport is nicc diff --closed-loop's table.
type ClosedLoopReport struct {
	Teacher        string               `json:"teacher"`
	Against        string               `json:"against"`
	TeacherDecides string               `json:"teacher_decides"`
	Decides        string               `json:"compiled_decides"`
	Latency        string               `json:"compiled_latency"`
	Params         *artifact.RLCCParams `json:"rlcc_params"`
	ClockPPM       float64              `json:"clock_ppm"` // each NIC's clock tolerance; 0 one ideal clock
	MaxGoodputDiff float64              `json:"max_goodput_diff"`
	MaxLatencyDiff float64              `json:"max_latency_diff_ratio"`
	LatencySlackUs float64              `json:"latency_slack_us"`
	Health         HealthLimits         `json:"health_limits"`
	Rows           []ClosedLoopRow      `json:"rows"`
	Pass           bool                 `json:"pass"`
	Plots          []string             `json:"plots,omitempty"`
	// Warnings are the sanity probe's on the teacher and the compile's model (probeWarnings).
	Warnings []string `json:"warnings,omitempty"`
}

// DiffClosedLoop runs every scenario twice, with the float teacher and with the compile
// deciding, under the compile's RL-CC parameters, and sets the papers' figures side by side.
// The two runs of a scenario go in parallel. Bad input is an error; a compile out of
// tolerance is a report with Pass false (CheckErr says so).
func DiffClosedLoop(opt ClosedLoopOptions) (*ClosedLoopReport, error) {
	if !artifact.IsCompileDir(opt.Against) {
		return nil, fmt.Errorf("--closed-loop: --against %q is not a compile output directory (nicc compile --out DIR writes one)", opt.Against)
	}
	cr, err := artifact.ReadReport(opt.Against, cmp.Or(opt.SDK, abi.Target).ELF())
	if err != nil {
		return nil, err
	}
	params := cr.FixedParams()
	inputs, err := golden.TeacherInputs(opt.Teacher, opt.Format, opt.Inputs, opt.Against, cr.Layout)
	if err != nil {
		return nil, err
	}
	rep := &ClosedLoopReport{Teacher: opt.Teacher, Against: opt.Against, Params: artifact.NewRLCCParams(params), ClockPPM: opt.Net.ClockPPM,
		MaxGoodputDiff: cmp.Or(opt.MaxGoodputDiff, DefaultMaxGoodputDiff), MaxLatencyDiff: cmp.Or(opt.MaxLatencyDiff, DefaultMaxLatencyDiff),
		LatencySlackUs: cmp.Or(opt.LatencySlackUs, DefaultLatencySlackUs), Health: DefaultHealth, Pass: true}
	if opt.Health != nil {
		rep.Health = *opt.Health
	}
	if err := checkHealthLimits(rep.Health); err != nil {
		return nil, err
	}
	runs := opt.Runs
	if runs == nil {
		runs = DefaultClosedLoopRuns
	}
	for _, run := range runs {
		if err := checkClosedLoopMemory(run, opt.Net); err != nil {
			return nil, err
		}
	}
	for k, run := range runs {
		base := SimOptions{Scenario: run.Scenario, Flows: run.Flows, Net: opt.Net, LatencyNs: opt.LatencyNs, Health: &rep.Health}
		teacher, compiled := base, base
		teacher.Policy, teacher.Format, teacher.Inputs, teacher.Params = opt.Teacher, opt.Format, inputs, params
		teacher.ParamSources, teacher.learnBaseRTT = golden.SourcesAll(artifact.SourceCompile), opt.SDK == doca.Target
		teacher.Core, teacher.noHandlerFlag = cr.Budget.Core.Name, true
		compiled.Policy, compiled.Golden, compiled.SDK = opt.Against, opt.Golden, opt.SDK
		var tr, fr *SimReport
		var terr, ferr error
		var wg sync.WaitGroup
		wg.Go(func() { tr, terr = Sim(teacher) })
		wg.Go(func() { fr, ferr = Sim(compiled) })
		wg.Wait()
		if err := cmp.Or(terr, ferr); err != nil {
			return nil, fmt.Errorf("%s: %w", run, err)
		}
		if tp, fp := tr.Params.String(), fr.Params.String(); tp != fp {
			return nil, fmt.Errorf("%s: the teacher would run under %s, the compile under %s", run, tp, fp)
		}
		rep.TeacherDecides, rep.Decides, rep.Latency, rep.Params = tr.Decides, fr.Decides, fr.Latency, fr.Params
		if k == 0 {
			rep.Warnings = slices.Compact(append(tr.Warnings, fr.Warnings...))
		}
		rep.Rows = append(rep.Rows, rep.row(run, tr, fr))
		rep.Pass = rep.Pass && rep.Rows[k].Pass
		if opt.Progress != nil {
			opt.Progress("closed loop", k+1, len(runs))
		}
	}
	if opt.Out != "" {
		if rep.Plots, err = plotClosedLoop(rep, opt.Out); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// checkClosedLoopMemory refuses a scenario whose two runs, the teacher's and the compile's,
// which go in parallel, would need more than MemoryLimit together (or one of them more than
// SimEventLimit events).
func checkClosedLoopMemory(run ClosedLoopRun, net netsim.Config) error {
	scen, err := simScenario(SimOptions{Scenario: run.Scenario, Flows: run.Flows, Net: net})
	if err != nil {
		return err
	}
	fp, err := netsim.Estimate(scen, net, 0)
	if err != nil {
		return err
	}
	return memlimit.CheckSimFootprint(fmt.Sprintf("%s: %s, run twice at once (the teacher and the compile)", run, memlimit.SimWhat(scen, net)), net, fp, fp.Bytes,
		"the other run", "a shorter --duration or fewer flows in --runs")
}

// row is a scenario's verdict: each side's health, then the compile against the teacher.
func (r *ClosedLoopReport) row(run ClosedLoopRun, tr, fr *SimReport) ClosedLoopRow {
	t, c := tr.Result, fr.Result
	row := ClosedLoopRow{ClosedLoopRun: run, Teacher: t, Compiled: c, GoodputDiff: c.Goodput - t.Goodput,
		TeacherHealth: tr.Health, CompiledHealth: fr.Health, Pass: true}
	dq := c.QueueMeanUs - t.QueueMeanUs
	if t.QueueMeanUs > 0 {
		row.LatencyDiff = dq / t.QueueMeanUs
	}
	var why []string
	if !tr.Health.Healthy {
		why = append(why, fmt.Sprintf("the teacher does not control congestion here (%s); the comparison says nothing", tr.Health.failText()))
	} else if !fr.Health.Healthy {
		why = append(why, fmt.Sprintf("the compile does not control congestion here (%s)", fr.Health.failText()))
	}
	if math.Abs(row.GoodputDiff) > r.MaxGoodputDiff {
		why = append(why, fmt.Sprintf("goodput %+.4f (tolerance %s)", row.GoodputDiff, termtext.Num3(r.MaxGoodputDiff)))
	}
	if math.Abs(dq) > max(r.LatencySlackUs, r.MaxLatencyDiff*t.QueueMeanUs) {
		why = append(why, fmt.Sprintf("queue latency %+.2f%% (%+s µs; tolerance %s%% or %s µs)", 100*row.LatencyDiff, termtext.Num3(dq), termtext.Num3(100*r.MaxLatencyDiff), termtext.Num3(r.LatencySlackUs)))
	}
	row.Pass, row.Why = len(why) == 0, strings.Join(why, "; ")
	return row
}

// CheckErr is a *CheckError when a scenario is out of tolerance, so the command exits 1.
func (r *ClosedLoopReport) CheckErr() error {
	if r.Pass {
		return nil
	}
	var bad []string
	for _, row := range r.Rows {
		if !row.Pass {
			bad = append(bad, row.String())
		}
	}
	var teacher []string
	for _, row := range r.Rows {
		if !row.TeacherHealth.Healthy {
			teacher = append(teacher, row.String())
		}
	}
	if len(teacher) > 0 {
		return &budget.CheckError{Err: fmt.Errorf("closed loop: %s failed; the teacher does not control congestion in %s, where the comparison says nothing", strings.Join(bad, ", "), strings.Join(teacher, ", "))}
	}
	return &budget.CheckError{Err: fmt.Errorf("closed loop: %s out of tolerance or unhealthy", strings.Join(bad, ", "))}
}

// WriteText prints the table: per scenario the teacher's figures over the compile's.
func (r *ClosedLoopReport) WriteText(w io.Writer) error {
	termtext.Printf(w, "teacher   %s\n", r.TeacherDecides)
	termtext.Printf(w, "compiled  %s; latency %s\n", r.Decides, r.Latency)
	termtext.Printf(w, "rl-cc     %s\n", r.Params)
	termtext.Printf(w, "network   %s\n", clocksText(r.ClockPPM))
	termtext.Printf(w, "tolerance goodput ±%s, mean queue latency ±%s%% (or ±%s µs)\n", termtext.Num3(r.MaxGoodputDiff), termtext.Num3(100*r.MaxLatencyDiff), termtext.Num3(r.LatencySlackUs))
	termtext.Printf(w, "health    each side: drops ≤ %s Gb/s, RTT inflation ≤ %s× Eq. 2 (target·√N + β, N flows per receiver port), SU ≥ %s%%\n",
		termtext.Num3(r.Health.MaxDropGbps), termtext.Num3(r.Health.MaxEq2Ratio), termtext.Num3(r.Health.MinSU))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tN\tpolicy\tSU %\tFR\tQL µs\tQL p99\tDR Gb/s\tgoodput\trecovery µs\thealth\tΔgoodput\tΔQL\tverdict\t")
	for _, row := range r.Rows {
		for i, res := range []*netsim.Result{row.Teacher, row.Compiled} {
			who, dGoodput, dQL, verdict, health := "teacher", "", "", "", row.TeacherHealth
			if i == 1 {
				health = row.CompiledHealth
			}
			healthy := "ok"
			if !health.Healthy {
				healthy = "FAIL"
			}
			if i == 1 {
				verdict = "pass"
				if !row.Pass {
					verdict = "FAIL"
				}
				who, dGoodput, dQL = "compiled", fmt.Sprintf("%+.4f", row.GoodputDiff), fmt.Sprintf("%+.1f%%", 100*row.LatencyDiff)
			}
			termtext.Printf(tw, "%s\t%d\t%s\t%.2f\t%.1f\t%s\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%s\t\n", row.Scenario, row.Flows, who, res.Utilization, res.Fairness,
				termtext.Num3(res.QueueMeanUs), termtext.Num3(res.QueueP99Us), termtext.Num3(res.DropGbps), res.Goodput, recoveryText(res.RecoveryUs), healthy, dGoodput, dQL, verdict)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if !row.Pass {
			termtext.Printf(w, "FAIL      %s: %s\n", row, row.Why)
		}
	}
	for _, f := range r.Plots {
		termtext.Printf(w, "plot      %s\n", f)
	}
	return nil
}

func recoveryText(us *float64) string {
	switch {
	case us == nil:
		return "-"
	case *us < 0:
		return "none"
	}
	return termtext.Num3(*us)
}
