package main

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/diff"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/student"
	"github.com/nicc-dev/nicc/target/targets"
	"github.com/urfave/cli/v2"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare a float teacher with its integer network, its distilled trees, or a student file: errors, direction flips, per-layer trace, plots",
		ArgsUsage: "TEACHER",
		Description: `Compares the float teacher with a student over the calibration rows (--calib CSV, or
--samples sampled RL-CC states, default 20000):

  --against int    (default; int8 is its old name) the integer network nicc compile
                   --target int builds: of a dense network with the same quantization
                   (--weight-bits, --act-bits); of
                   the dense(relu) -> LSTM -> dense(tanh) policy with its own formats, the
                   rows run as sequences of 32 steps from the zero state, float and integer
                   each with its own state
  --against trees  the tree student nicc compile --target trees distills (--trees, --depth),
                   as its integer IR on the RL-CC Q16 grid
  --against FILE   a student model file: a tree ensemble as its integer IR (RL-CC inputs), a
                   network in float

A tree ensemble as TEACHER compares --against trees or --against FILE (int8 quantizes
networks only); an --against that is neither int8 nor trees must be a file.

It prints max |Δy|, RMSE, the p50/p90/p99/p99.9 of |Δy| and the fraction of decisions whose
direction (increase, decrease, hold within ±0.5% under the RL-CC multiplier map) differs;
against int also a per-layer trace, float against dequantized integer activations (for an
LSTM: x_t, the gates i, f, g, o, c', h' and y, along the same sequences). The summary
names the student's widths (e.g. integer network w16/a16, per-channel scales). With
--out DIR it writes diff_heatmaps.png/.svg (the action over (a_{t-1}, o_t/T), float,
student and Δy side by side, for the NIC paper's Fig. 5 previous states: steady,
under-utilised, congested; y beyond [-1, 1] marked and counted; an LSTM's cells are one
step from the zero state) and diff_histogram.png/.svg (Δy and |Δy| on a log count axis,
|Δy|'s percentiles marked).

RL-CC states are sampled for a teacher whose inputs are named in an RL-CC layout (any order;
see nicc compile --help), or under --handler rlcc (a 4-input teacher, by position); --inputs
names an export's inputs (names, authors or nicc). --closed-loop loads the teacher with the
layout the compile DIR recorded; an --inputs that disagrees with it is an error. The sampler's o spans [-T, 100T],
T = target·scale of the --rlcc-* parameters, which also set the handler's input ranges.

` + memlimit.Help + `

--closed-loop --against DIR asks what users care about most: does the firmware still
control congestion as well as the network it came from? It runs each --runs scenario
(default: many-to-one at 8, 64, 512, 1024 and 2048 flows, the NIC paper's Table 2;
all-to-all with 4 and 8 hosts; long-short with 2 short flows) twice in nicc sim's network,
same seed (--seed), same --duration: once with the float teacher deciding in the RL-CC
handler's real-number twin, once with DIR's firmware in fwsim (its golden model with
--golden, its DOCA PCC program with --sdk doca, as nicc sim runs them), both under the
compile's RL-CC parameters. It prints SU, FR, mean and p99 queue latency, drops, normalised
goodput and long-short's recovery time side by side, and per scenario whether the compile is within --max-goodput-diff (absolute) and --max-latency-diff
(relative mean queue latency, or within --latency-slack-us). Each side is also judged on its
own, as nicc sim judges a run's health (--max-drop-gbps, --max-eq2-ratio, --min-su; see nicc
sim --help): where the teacher is unhealthy the scenario fails, "the teacher does not control
congestion here (...); the comparison says nothing", however close the two sides are, and an
unhealthy compile beside a healthy teacher fails too; --json has teacher_health and
compiled_health per scenario. With --out DIR the bars go into
diff_closed_loop.png/.svg. The firmware's decisions take its measured cycles and the
teacher's none, unless --latency fixes both.

An RL-CC teacher goes through the sanity probe first (see nicc sim --help): a policy that
moves the rate the wrong way in a plain situation gets one warning line on standard error,
and warnings in --json.

Exit codes: 0 compared (closed loop: every scenario healthy and within tolerance); 1 closed
loop: a scenario out of tolerance or unhealthy (named on standard error); 2 bad input (an unreadable model, a
calibration set of the wrong width, a comparison the teacher does not support, e.g. int of a
tree ensemble).

  nicc diff testdata/models/rlcc_teacher.json --out build/diff
  nicc diff testdata/models/rlcc_lstm.onnx --out build/diff-lstm
  nicc diff testdata/models/rlcc_teacher.json --against build/student.json --json
  nicc diff testdata/models/rlcc_teacher_unnamed.onnx --handler rlcc --rlcc-scale 6
  nicc diff build/train/policy.json --closed-loop --against build/rlcc-int --out build/closed
  nicc diff build/train/policy.json --closed-loop --against build/rlcc-trees --runs many-to-one:64 --json
  nicc diff testdata/models/rlcc_xgb.json --closed-loop --against build/doca --sdk doca`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "against", Value: diff.AgainstInt, Usage: "int (the integer network; int8 is an alias), trees, or a student model `FILE`"},
			&cli.IntFlag{Name: "samples", Value: golden.DefaultCalibSamples, Usage: "RL-CC states to compare on (with --calib: at most this many rows, all unless given)"},
			&cli.StringFlag{Name: "calib", Usage: "CSV of rows to compare on, one value per teacher input", DefaultText: "--samples sampled RL-CC states"},
			&cli.StringFlag{Name: "out", Usage: "directory for the plots (none without it)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the state sampler and the distillation"},
			&cli.IntFlag{Name: "weight-bits", Value: 16, Usage: "int: weight width, 8 or 16 (16 when only --act-bits is given)", DefaultText: "chosen by the measured error, as compile does"},
			&cli.IntFlag{Name: "act-bits", Value: 16, Usage: "int: hidden activation width, 8 or 16 (16 when only --weight-bits is given)", DefaultText: "chosen by the measured error, as compile does"},
			&cli.IntFlag{Name: "trees", Value: 10, Usage: "trees: number of boosted trees"},
			&cli.IntFlag{Name: "depth", Value: 4, Usage: "trees: depth of each tree"},
			&cli.BoolFlag{Name: "closed-loop", Usage: "run the teacher and the compile --against DIR in nicc sim's network and compare what they do to it (see above)"},
			&cli.StringFlag{Name: "runs", Value: lab.FormatClosedLoopRuns(lab.DefaultClosedLoopRuns), Usage: "closed loop: the scenarios, SCENARIO:N comma separated"},
			&cli.StringFlag{Name: "duration", Value: "100ms", Usage: "closed loop: simulated time of each run (the second half is measured; many flows starting at line rate take ~15 ms to drain the start's queue)"},
			&cli.StringFlag{Name: "latency", Usage: "closed loop: fix every decision's time, teacher's and compile's, e.g. 500ns", DefaultText: "none for the teacher, the firmware's measured cycles"},
			&cli.BoolFlag{Name: "golden", Usage: "closed loop: the compile's golden integer model decides instead of its firmware in fwsim"},
			&cli.StringFlag{Name: "sdk", Value: "nicc", Usage: "closed loop: the compile's program that decides, nicc (firmware.elf) or doca (doca_firmware.elf, of nicc compile --sdk doca)"},
			clockPPMFlag,
			&cli.Float64Flag{Name: "max-goodput-diff", Value: lab.DefaultMaxGoodputDiff, Usage: "closed loop: tolerance of the normalised goodput, absolute"},
			&cli.Float64Flag{Name: "max-latency-diff", Value: lab.DefaultMaxLatencyDiff, Usage: "closed loop: tolerance of the mean queue latency, relative to the teacher's"},
			&cli.Float64Flag{Name: "latency-slack-us", Value: lab.DefaultLatencySlackUs, Usage: "closed loop: a mean queue latency difference this small (µs) passes whatever the ratio"},
			handlerFlag,
			formatFlag,
			inputsFlag, historyFlag, featuresFlag,
			jsonFlag,
		}, append(healthFlags("closed loop: "), rlccFlags()...)...),
		Action: runDiff,
	}
}

func runDiff(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("diff takes one TEACHER file, got %d arguments", c.NArg())
	}
	if c.Bool("closed-loop") {
		return runClosedLoop(c)
	}
	for _, name := range append([]string{"runs", "duration", "latency", "golden", "sdk", "max-goodput-diff", "max-latency-diff", "latency-slack-us"}, healthFlagNames...) {
		if c.IsSet(name) {
			return fmt.Errorf("--%s takes --closed-loop", name)
		}
	}
	format, err := golden.ParseFormat(c.String("format"))
	if err != nil {
		return err
	}
	samples := c.Int("samples")
	if samples < 1 {
		return fmt.Errorf("--samples %d: want at least 1", samples)
	}
	if c.String("calib") != "" && !c.IsSet("samples") {
		samples = 0
	}
	wb, ab := c.Int("weight-bits"), c.Int("act-bits")
	if wb != 8 && wb != 16 {
		return fmt.Errorf("--weight-bits %d: want 8 or 16", wb)
	}
	if ab != 8 && ab != 16 {
		return fmt.Errorf("--act-bits %d: want 8 or 16", ab)
	}
	if c.Int("trees") < 1 || c.Int("depth") < 1 {
		return fmt.Errorf("--trees %d --depth %d: want at least 1 each", c.Int("trees"), c.Int("depth"))
	}
	handler, err := artifact.ParseHandler(c.String("handler"))
	if err != nil {
		return err
	}
	inputs, err := modelInputs(c)
	if err != nil {
		return err
	}
	params, src, err := rlccParams(c)
	if err != nil {
		return err
	}
	q := int8Quant(c, wb, ab)
	r, err := lab.Diff(diff.DiffOptions{
		Teacher: c.Args().First(), Format: format, Inputs: inputs, Handler: handler, Params: params, ParamSources: src, Against: c.String("against"),
		Calib: c.String("calib"), Samples: samples, Seed: c.Uint64("seed"), Quant: q, Out: c.String("out"),
		Distill: student.DistillOptions{Train: distill.Options{Trees: c.Int("trees"), Depth: c.Int("depth")}},
	})
	if err != nil {
		return err
	}
	warn(c, r.Warnings)
	return printReport(c, r)
}

// runClosedLoop is nicc diff --closed-loop: the teacher and a compile of it in the same
// simulated network, side by side; exit 1 when a scenario is out of tolerance.
func runClosedLoop(c *cli.Context) error {
	for _, name := range []string{"samples", "calib", "weight-bits", "act-bits", "trees", "depth", "handler"} {
		if c.IsSet(name) {
			return fmt.Errorf("--%s does not apply to --closed-loop (the compile --against DIR fixes the student)", name)
		}
	}
	if !c.IsSet("against") {
		return fmt.Errorf("--closed-loop needs --against DIR, a nicc compile output directory of the teacher")
	}
	format, err := golden.ParseFormat(c.String("format"))
	if err != nil {
		return err
	}
	inputs, err := modelInputs(c)
	if err != nil {
		return err
	}
	runs, err := lab.ParseClosedLoopRuns(c.String("runs"))
	if err != nil {
		return err
	}
	sdk, err := targets.Parse(c.String("sdk"))
	if err != nil {
		return fmt.Errorf("--sdk: %w", err)
	}
	opt := lab.ClosedLoopOptions{Teacher: c.Args().First(), Format: format, Inputs: inputs, Against: c.String("against"),
		Golden: c.Bool("golden"), SDK: sdk, Runs: runs, Out: c.String("out"), Net: lab.SimNet{Seed: c.Uint64("seed")},
		MaxGoodputDiff: c.Float64("max-goodput-diff"), MaxLatencyDiff: c.Float64("max-latency-diff"), LatencySlackUs: c.Float64("latency-slack-us"),
		Health: healthLimits(c)}
	for _, tol := range []string{"max-goodput-diff", "max-latency-diff", "latency-slack-us"} {
		if v := c.Float64(tol); !(v > 0 && v < math.Inf(1)) {
			return fmt.Errorf("--%s %v: want a positive finite tolerance", tol, v)
		}
	}
	if err := durationFlags(c, map[string]*int64{"duration": &opt.Net.DurationNs, "latency": &opt.LatencyNs}, "latency"); err != nil {
		return err
	}
	if opt.Net.ClockPPM, err = clockPPM(c); err != nil {
		return err
	}
	var done func()
	opt.Progress, done = progressBars(c)
	defer done()
	r, err := lab.DiffClosedLoop(opt)
	if err != nil {
		return err
	}
	warn(c, r.Warnings)
	if err := printReport(c, r); err != nil {
		return err
	}
	return r.CheckErr()
}
