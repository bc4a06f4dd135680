package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/target/targets"
	"github.com/urfave/cli/v2"
)

// simHelp is nicc sim --help's description.
var simHelp = `Simulates hosts on one switch, packet by packet, with every sender NIC's CC engine in the
loop, and prints the RL-CC papers' figures over the steady-state window (after the warm-up,
by default the first half of the run; for long-short the first eighth, before the short
flows join): switch utilization (SU), fairness min/max × 100 (FR)
and Jain's index, queue latency (QL, mean and p99), the drop rate (DR), CC events dropped by
full engines, and for long-short the long flow's recovery time; when a compile's firmware or
DOCA program decides, its decisions' fwsim cycles (mean, max) and their time.

SCENARIO is one of ` + strings.Join(lab.SimScenarios, ", ") + `:

  many-to-one  --flows N senders' flows into one receiver, with the papers' host mapping
               (N <= 64: one flow a host; 128 ... 8192 as in the papers' table)
  all-to-all   --flows N hosts (default 4), 2N flows each; flow i of a host goes to host i mod N
  long-short   one long flow, joined a quarter into the run by --flows N short flows of 2 MiB
  workload     --flows N hosts (default 64), each starting flows by a Poisson process at
               --load (default 0.5) of its link, to hosts drawn at random, their sizes drawn
               from --sizes: websearch (DCTCP's web search, the default) or fbhadoop
               (Facebook's Hadoop), the tables the HPCC paper evaluates with. The report adds
               each size bucket's completion-time slowdown (the flow's time over its time
               alone at line rate; mean, p99) over the flows started in the window, and how
               many had not finished by the end; its health is its drops alone. Flows that
               lose data finish only with --go-back-n

--preset NAME sets the network of another simulator, measured from its behaviour, for the
flags the command line leaves unset:
` + presetHelp() + `
--policy decides for every flow:
  MODEL     a model file (` + formats.Titles("networks") + `): the float teacher in the RL-CC
            handler's real-number twin, under the --rlcc-* parameters: each from its flag
            when given, else from the file (nicc train writes them), else the default; its
            inputs named in an RL-CC layout (--inputs names an export's), or read as
            a_prev, o, a_prev2, o_prev by position with --handler rlcc, as nicc compile
            --handler rlcc reads them
  DIR       a nicc compile output directory: its firmware.elf in fwsim, each decision a call
            of nicc_on_event with the flow's 48-byte context, taking its measured cycles at
            the core's clock times the threads sharing the pipeline; with --golden, its
            integer golden model in nicsdk's runtime instead; the --rlcc-* parameters are
            the compiled ones
  DIR --sdk doca
            the DOCA PCC program of nicc compile --sdk doca (DIR/doca_firmware.elf) in fwsim,
            as a BlueField's engine runs it: doca_pcc_dev_user_init once per NIC, each NIC
            with its own parameter and counter tables; every CC event of a flow a DOCA event
            (RTT: timestamp now, its request sent one RTT before; CNP, NACK, TX) of slot 0,
            port 0 on the flow's 48-byte context, the rate the results' rate (its rtt_req is
            not used: the simulated NIC keeps one RTT probe in flight), its time the entry's
            measured cycles as above. --rlcc-target, --rlcc-beta and --rlcc-scale,
            when given, are set on every NIC after init through
            doca_pcc_dev_user_set_algo_params, as the host sets them (a value it refuses is
            an error); the other --rlcc-* parameters are compiled into the program.
            --set-at TIME sets them instead at that simulated time, on every NIC's live
            engine, as an operator changes them: the run decides under the compiled
            parameters until then, and decisions that start from then on under the new
            ones (the values are tried on a scratch engine first, so a refusal is an error
            before the run). The report says when; the window is still --warmup's (by
            default the second half), so put --warmup after TIME to measure only the new
            parameters, and --out DIR plots the rates and queue across the change. The
            report adds the program's counters (decisions, rates at a bound) summed over the
            NICs, beside the RTT events the loop gave it
  swift     the Swift reference (its paper's Algorithm 1 on a paced window: a delay target
            scaled by flows and hops, additive increase per RTT, a bounded decrease once an
            RTT); --swift NAME=VALUE,... sets its parameters
  dcqcn     the DCQCN reference (ECN marking at the switch, CNPs, α, fast recovery), on a
            lossless network as RoCE deploys it (PFC pauses the senders before the buffer fills;
            --pfc off runs it on the same lossy network as the others, --pfc on gives any
            policy PFC, --pfc port pauses per ingress port); --dcqcn NAME=VALUE,... sets its
            parameters

A base RTT of 0 (the default: nothing set it) runs as the scenario's path RTT, which the host
provisions in every flow's context at flow start, for a model file and a compile's firmware
or golden model alike (a DOCA program inits its flows itself and learns it from the smallest
RTT seen); the rl-cc line (--json: rlcc_params) gives each parameter and where it came
from: model, flag, default, compile or scenario path RTT.

The engine of each NIC has --threads hardware threads (default: the core profile's) and a
1024-event queue; an event that finds both full is dropped and counted, as the NIC counts
it. --latency fixes every decision's time (then a compile's firmware, its DOCA program and its
golden model give the same run, bit for bit, under the same parameters). Each NIC paces its
flows, ticks its CC timers and times its RTTs by a clock of its own, off the nominal
frequency by up to --clock-ppm (default ±100 ppm, IEEE 802.3's tolerance), drawn from
--seed; --clock-ppm 0 puts every NIC on one ideal clock, where flows of different hosts that
start together and decide alike stay in lockstep. The same seed gives the same output.

Dropped data is lost by default. --go-back-n recovers it as RoCE's reliable connection does:
the receiver discards a packet beyond the next expected byte and sends one NACK for the gap,
the sender goes back to that byte, and a gap no NACK reports (a lost retransmission, a lost
tail) waits out the retransmission timeout (--rto, default 1ms). Goodput then counts in-order
data only, the policy sees each NACK (an RL-CC handler ignores it), and the report adds the
data sent again and discarded, the NACKs and the timeouts.

Health: every run (each run of --matrix too) is judged on its own, whatever any other policy
does: the window's drops (--max-drop-gbps, default 0), the mean RTT inflation against the NIC
paper's Eq. 2, target·√N + β with N the flows per receiver port under the RL-CC parameters the
run decided with (--max-eq2-ratio, default 2×), and the switch utilization (--min-su, default
92%). The defaults are measured: on many-to-one 16 and 128 the shipped RL-CC models drop
nothing, sit at 0.93-1.02× Eq. 2 and 97.5-100% SU; Swift, whose flow scaling raises its
target with the flows, at 1.48× and 97% at 16 flows and 2.4× (FAIL) at 128; a full
buffer is 20× Eq. 2, and rlcc_adpg fed its inputs in the wrong order keeps the link 88-91%
busy. The health line says ok or FAIL and why (and, past the flows the RL-CC min rate allows,
that no RL-CC policy avoids drops there); --json carries it as health. An unhealthy run exits
0 (a sweep or --theory measures where a policy breaks); --require-healthy makes it exit 1,
the gate a CI wants.

Before it runs, an RL-CC policy's float model goes through the sanity probe: o far above
target must cut the rate and o at its idle minimum must raise it, at a few previous
multipliers, with the previous state the same or the opposite. A policy that does the
opposite gets one warning line on standard error naming the probe row and its multiplier
(warnings in --json); the run goes on.

Exit codes: 0 ran; 1 the firmware trapped during the run, or returned a rate outside [the
compiled min rate, line rate] (the flow, time and pc or rate are named; no partial result is
printed), or --require-healthy and a run was unhealthy; 2 bad input.

Bounds: --link-gbps 0.1 to 10000, every time flag up to 1h, --link-delay up to 1s, --threads
up to 65536, --flows at least 1. A run is estimated from its flags before it starts: one that
needs more than ` + fmt.Sprint(memlimit.Limit>>30) + ` GiB (400 bytes an event in flight: every data link's
bandwidth-delay product in --mtu packets, and each flow's control packets) or may fire more
than 1e11 events (the senders at line rate for --duration, and every flow's probes) is
refused in one line with the estimate (exit 2).

  nicc sim many-to-one --flows 16 --policy swift
  nicc sim many-to-one --flows 64 --policy build/rlcc --duration 40ms --json
  nicc sim many-to-one --policy build/rlcc --golden --latency 500ns
  nicc sim many-to-one --policy build/doca --sdk doca --rlcc-target 0.032
  nicc sim many-to-one --policy build/doca --sdk doca --rlcc-target 0.016 --set-at 10ms --warmup 12ms --out build/sim
  nicc sim long-short --flows 2 --policy testdata/models/rlcc_teacher.onnx --out build/sim
  nicc sim --theory all --policy build/train/policy.json --out build/theory

--theory runs many-to-one at each flow count it lists (all: 2, 4, ..., 1024) and prints the
policy's mean RTT inflation (RTT ÷ the path's base RTT) beside the NIC paper's Eq. 2,
target·√N + β, with --out DIR the curve.

A sweep that outgrows one machine: --matrix FILE runs every combination of a JSON file's
{"scenarios": [...], "flows": [...], "seeds": [...], "policies": [...], "duration": "20ms",
"latency": "500ns"} (the last two optional), numbered in that nesting order; --shard i/n runs
the runs whose number is i modulo n, and nicc sim merge SHARD.json... joins the shards' --json
outputs into the whole matrix's, byte for byte what one unsharded run prints; it refuses
shards run with different flags (each records its setup), a policy file that changed between
shards (each run records its policy_sha256), a run that contradicts its index and a run
without a result.
docs/k8s/sim-matrix.yaml runs the shards as a Kubernetes Indexed Job, then the merge.

  nicc sim --matrix sweep.json --shard 3/8 --json > shard-3.json
  nicc sim merge --json shard-*.json > sweep-result.json`

func simCommand() *cli.Command {
	return &cli.Command{
		Name:        "sim",
		Usage:       "run a policy in closed loop: a packet-level datacenter simulation with the NIC's CC engine, and the firmware itself, deciding",
		ArgsUsage:   "SCENARIO",
		Description: simHelp,
		Subcommands: []*cli.Command{simMergeCommand()},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "a model `FILE`, a compile output DIR, swift or dcqcn"},
			&cli.StringFlag{Name: "preset", Usage: "a network measured from another simulator, for the flags not given: " + strings.Join(presetNames(), ", ") + " (see above)"},
			&cli.StringFlag{Name: "matrix", Usage: "run every scenario × flows × seed × policy of a JSON `FILE` (see above) instead of one SCENARIO"},
			&cli.StringFlag{Name: "shard", Value: "0/1", Usage: "with --matrix: run shard i/n, the runs whose index is i modulo n"},
			&cli.StringFlag{Name: "theory", Usage: "instead of one SCENARIO: many-to-one at each of these flow counts (e.g. 2,4,...,1024, or all for the default list), the mean RTT inflation against target·√N + β"},
			&cli.IntFlag{Name: "flows", Usage: "flows (many-to-one), hosts (all-to-all) or short flows (long-short)", DefaultText: "16, 4, 2"},
			&cli.StringFlag{Name: "duration", Value: "20ms", Usage: "simulated time"},
			&cli.StringFlag{Name: "warmup", Usage: "start of the measurement window", DefaultText: "half the duration"},
			&cli.Uint64Flag{Name: "seed", Usage: "the run's seed (ECN marks, the NICs' clock offsets)"},
			clockPPMFlag,
			&cli.BoolFlag{Name: "golden", Usage: "with a compile DIR: its golden integer model decides, not the firmware"},
			&cli.StringFlag{Name: "sdk", Value: "nicc", Usage: "with a compile DIR: the program that decides, nicc (firmware.elf, nicc_on_event) or doca (doca_firmware.elf, the DOCA PCC program of nicc compile --sdk doca)"},
			&cli.StringFlag{Name: "set-at", Usage: "with --sdk doca: set --rlcc-target, --rlcc-beta and --rlcc-scale on every NIC's live engine at this simulated time, e.g. 10ms", DefaultText: "right after init"},
			&cli.StringFlag{Name: "latency", Usage: "fix every decision's time, e.g. 500ns", DefaultText: "the firmware's measured cycles; none for other policies"},
			&cli.IntFlag{Name: "threads", Usage: "CC engine hardware threads per NIC (and sharing the pipeline)", DefaultText: "the core profile's"},
			&cli.StringFlag{Name: "core", Usage: "core profile for the engine's threads and clock (nicc budget --list-cores)", DefaultText: "the compile's, else " + budget.DefaultCore},
			&cli.Float64Flag{Name: "link-gbps", Value: 100, Usage: "every link's rate in Gb/s"},
			&cli.IntFlag{Name: "buffer", Value: 5 << 20, Usage: "the switch's shared buffer in bytes"},
			&cli.Float64Flag{Name: "buffer-alpha", Usage: "limit each egress port's queue to this many times the buffer still free (a dynamic threshold, as shared-buffer switches do; one port alone then holds α/(1+α) of it), 0 to 64", DefaultText: "0: the ports share it drop-tail, first come"},
			&cli.IntFlag{Name: "mtu", Value: 4096, Usage: "data packet size in bytes"},
			&cli.IntFlag{Name: "tx-burst", Value: 16384, Usage: "the most data a flow sends in one TX burst, whole packets, before its RTT probe (a burst is what the flow's rate sends in --tx-burst-time, at least one packet)"},
			&cli.StringFlag{Name: "tx-burst-time", Value: "4us", Usage: "a flow's TX burst is what its rate sends in this time, up to --tx-burst; 1s makes every burst --tx-burst whatever the rate (CCsim's TX events are 4 KB each), and a slow flow then decides once a burst, far apart"},
			&cli.StringFlag{Name: "pfc", Value: lab.PFCAuto, Usage: "PFC at the switch (the senders pause before the buffer fills): auto (on for dcqcn only), on (every sender pauses while the buffer is past Xoff), port (per ingress port, as PFC does: a host pauses while its data in its switch passes its port's share of the buffer) or off"},
			&cli.StringFlag{Name: "ecn", Value: "auto", Usage: "ECN marking at the switch's egress queues, RED style: auto (DCQCN's 100KB,400KB,0.2 for dcqcn only), off, or KMIN,KMAX,PMAX (none below KMIN, all above KMAX, rising to PMAX between)"},
			&cli.StringFlag{Name: "start-window", Usage: "start each flow later by its own seeded draw, uniform in LO,HI, e.g. 1ms,2ms as CCsim does", DefaultText: "as the scenario starts them"},
			&cli.StringFlag{Name: "fat-tree", Usage: "run on a two-level fat tree instead of one switch: nic-paper (the NIC paper's large cluster: 4 ToRs of 16 hosts, 3 spines, 4 links between each ToR and spine) or TORS,HOSTS,SPINES,LINKS; many-to-one is then into one host from the other racks, all-to-all every host to every host of the other racks", DefaultText: "one switch"},
			&cli.StringFlag{Name: "sizes", Usage: "workload: the flow-size distribution, websearch (DCTCP's web search) or fbhadoop (Facebook's Hadoop), as the HPCC paper tabulates them", DefaultText: "websearch"},
			&cli.Float64Flag{Name: "load", Usage: fmt.Sprintf("workload: each host's offered load, a fraction of its link (%v to %v)", lab.MinWorkloadLoad, lab.MaxWorkloadLoad), DefaultText: fmt.Sprint(lab.DefaultWorkloadLoad)},
			&cli.BoolFlag{Name: "go-back-n", Usage: "recover dropped data as RoCE does: a NACK for the first gap, go-back-N, a retransmission timeout (--rto); goodput counts in-order data only, and NACKs reach the policy", DefaultText: "off: dropped data is lost"},
			&cli.StringFlag{Name: "probe", Value: "tx", Usage: "when a flow's RTT probe leaves its NIC (one in flight a flow, asked for by every decision but a TX event's): tx, with the flow's next TX burst after its data, as DOCA PCC's engine sends the RTT request (a slow flow decides once a packet); or at-once, on its own as soon as the decision that asked for it ends (every flow decides once an RTT, and the probes load the bottleneck); or tx-first, with the next TX burst ahead of its data (CCsim's)"},
			&cli.BoolFlag{Name: "tx-events", Usage: "deliver a TX event to the sender's CC engine for every burst a flow sends, as DOCA PCC's engine does: each takes an engine thread for a decision (not with dcqcn, whose timer ticks are TX events)", DefaultText: "off: RTT, CNP and NACK events only"},
			&cli.StringFlag{Name: "swift", Usage: "with --policy swift: its parameters, NAME=VALUE,... of " + lab.ReferenceParamNames("swift"), DefaultText: "its paper's where they carry over"},
			&cli.StringFlag{Name: "dcqcn", Usage: "with --policy dcqcn: its parameters, NAME=VALUE,... of " + lab.ReferenceParamNames("dcqcn"), DefaultText: "its paper's"},
			&cli.IntFlag{Name: "window", Usage: "with --go-back-n: the most `BYTES` a flow has sent and not had acknowledged (RoCE's outstanding requests; CCsim's QPs hold about 640 KiB): a flow at it waits for an acknowledgement", DefaultText: "no limit"},
			&cli.StringFlag{Name: "rto", Value: "1ms", Usage: "with --go-back-n: the senders' retransmission timeout (RoCE's local ACK timeout)"},
			&cli.StringFlag{Name: "rtt-turnaround", DefaultText: "none", Usage: "how long an RTT probe's reply takes from its arrival to the sender's CC engine; the flow's next probe waits as long (CCsim's NIC: 2.7 µs, its reports an RTT and at least that apart at any rate)"},
			&cli.StringFlag{Name: "tx-lead", DefaultText: "none", Usage: "each TX burst leaves this much sooner than its flow's rate allows (CCsim's NIC sends each 4 KB TX event 147 ns early: a flow it holds at 43.8 Gb/s sends 54.6)"},
			&cli.StringFlag{Name: "host-delay", DefaultText: "none", Usage: "each NIC's pipeline delay, on every packet it sends and every packet it receives (the empty path's RTT gains four; CCsim's base RTT is about 8 µs, this network's 4 without it)"},
			&cli.StringFlag{Name: "link-delay", Value: "1us", Usage: "one-way propagation delay of every link (the base RTT is about 4 of them plus serialization)"},
			&cli.StringFlag{Name: "model", Usage: "with a compile DIR: the model file compiled, when it has moved"},
			&cli.StringFlag{Name: "out", Usage: "plot the first 16 flows' rates and the receiver queue over time into `DIR` (" + lab.SimPlotBase + ".png and .svg)"},
			&cli.BoolFlag{Name: "require-healthy", Usage: "exit 1 when a run is unhealthy (see Health above); without it an unhealthy run is reported and exits 0"},
			simHandlerFlag, formatFlag, inputsFlag, historyFlag, featuresFlag, jsonFlag,
		}, append(healthFlags(""), rlccFlags()...)...),
		Action: runSim,
	}
}

func runSim(c *cli.Context) error {
	if c.IsSet("set-at") && (c.IsSet("matrix") || c.IsSet("theory")) {
		return fmt.Errorf("--set-at takes one SCENARIO's run, not --matrix or --theory")
	}
	if c.IsSet("matrix") {
		return runSimMatrix(c)
	}
	if c.IsSet("theory") {
		return runSimTheory(c)
	}
	if c.IsSet("shard") {
		return fmt.Errorf("--shard takes --matrix")
	}
	if c.NArg() != 1 {
		return fmt.Errorf("sim takes one SCENARIO (%s), got %d arguments", strings.Join(lab.SimScenarios, ", "), c.NArg())
	}
	opt, err := simOptions(c)
	if err != nil {
		return err
	}
	if c.IsSet("flows") && c.Int("flows") < 1 {
		return fmt.Errorf("--flows %d: want at least 1", c.Int("flows"))
	}
	opt.Scenario, opt.Flows, opt.Policy, opt.PlotDir = c.Args().First(), c.Int("flows"), c.String("policy"), c.String("out")
	opt.Sizes, opt.Load = c.String("sizes"), c.Float64("load")
	if c.IsSet("load") && !(opt.Load >= lab.MinWorkloadLoad && opt.Load <= lab.MaxWorkloadLoad) {
		return fmt.Errorf("--load %v: want a fraction of the link, %v to %v", opt.Load, lab.MinWorkloadLoad, lab.MaxWorkloadLoad)
	}
	if err := durationFlags(c, map[string]*int64{"set-at": &opt.DOCASetAtNs}, "set-at"); err != nil {
		return err
	}
	var done func()
	opt.Progress, done = progressBars(c)
	defer done()
	r, err := lab.Sim(opt)
	if err != nil {
		return err
	}
	warn(c, r.Warnings)
	return printHealthy(c, r)
}

// printHealthy prints r and, under --require-healthy, fails when a run was unhealthy.
func printHealthy(c *cli.Context, r interface {
	WriteText(io.Writer) error
	HealthErr() error
}) error {
	if err := printReport(c, r); err != nil {
		return err
	}
	if c.Bool("require-healthy") {
		return r.HealthErr()
	}
	return nil
}

// simOptions are the options of every run the flags give (scenario, flows and policy aside).
func simOptions(c *cli.Context) (lab.SimOptions, error) {
	if err := applyPreset(c); err != nil {
		return lab.SimOptions{}, err
	}
	opt := lab.SimOptions{Golden: c.Bool("golden"), Model: c.String("model"), Threads: c.Int("threads"), Core: c.String("core"), PFC: c.String("pfc"), ECN: c.String("ecn"),
		Health: healthLimits(c)}
	if err := policyFlags(c, &opt); err != nil {
		return opt, err
	}
	if opt.SDK == doca.Target {
		for _, f := range golden.RLCCParamFields() {
			if c.IsSet(f.Flag) {
				opt.DOCASet = append(opt.DOCASet, lab.DOCASetting{Flag: f.Flag, Given: c.Float64(f.Flag)})
			}
		}
	}
	var err error
	durations := map[string]*int64{"tx-burst-time": &opt.Net.BurstNs, "duration": &opt.Net.DurationNs, "warmup": &opt.Net.WarmupNs, "latency": &opt.LatencyNs, "link-delay": &opt.Net.PropNs, "rto": &opt.Net.RTONs, "host-delay": &opt.Net.HostDelayNs,
		"rtt-turnaround": &opt.Net.TurnaroundNs, "tx-lead": &opt.Net.TXLeadNs}
	if err := durationFlags(c, durations, "warmup", "latency", "host-delay", "rtt-turnaround", "tx-lead"); err != nil {
		return opt, err
	}
	if c.IsSet("rto") && !c.Bool("go-back-n") {
		return opt, fmt.Errorf("--rto is go-back-N's retransmission timeout: it takes --go-back-n")
	}
	opt.Net.GoBackN = c.Bool("go-back-n")
	if c.IsSet("window") && (!opt.Net.GoBackN || c.Int("window") < 1) {
		return opt, fmt.Errorf("--window %d: want a positive size in bytes, with --go-back-n (its acknowledgements open the window)", c.Int("window"))
	}
	opt.Net.WindowBytes = c.Int("window")
	probe, ok := lab.SimProbes[c.String("probe")]
	if !ok {
		return opt, fmt.Errorf("--probe %q: want tx, at-once or tx-first", c.String("probe"))
	}
	opt.Net.Probe, opt.Net.TXEvents = probe, c.Bool("tx-events")
	opt.Swift, opt.DCQCN = c.String("swift"), c.String("dcqcn")
	if c.IsSet("fat-tree") {
		if opt.Net.FatTree, err = lab.ParseFatTree(c.String("fat-tree")); err != nil {
			return opt, err
		}
	}
	if c.IsSet("start-window") {
		lo, hi, ok := strings.Cut(c.String("start-window"), ",")
		a, errA := time.ParseDuration(strings.TrimSpace(lo))
		b, errB := time.ParseDuration(strings.TrimSpace(hi))
		if !ok || errA != nil || errB != nil || a < 0 || b < a || b.Nanoseconds() > lab.MaxSimTimeNs {
			return opt, fmt.Errorf("--start-window %q: want LO,HI with 0 <= LO <= HI, such as 1ms,2ms", c.String("start-window"))
		}
		opt.StartWindowNs = [2]int64{a.Nanoseconds(), b.Nanoseconds()}
	}
	if v := c.Int("threads"); v < 0 || v > lab.MaxSimThreads || c.IsSet("threads") && v == 0 {
		return opt, fmt.Errorf("--threads %d: want 1 to %d", v, lab.MaxSimThreads)
	}
	if v := c.Float64("link-gbps"); !(v >= lab.MinLinkGbps && v <= lab.MaxLinkGbps) {
		return opt, fmt.Errorf("--link-gbps %v: want %v to %v", v, lab.MinLinkGbps, lab.MaxLinkGbps)
	}
	if v := c.Int("buffer"); v <= 0 {
		return opt, fmt.Errorf("--buffer %d: want a positive size in bytes", v)
	}
	if v := c.Int("mtu"); v < 64 || v > 1<<20 {
		return opt, fmt.Errorf("--mtu %d: want 64 to 1048576 bytes", v)
	}
	opt.Net.MTU = c.Int("mtu")
	if v := c.Int("tx-burst"); v < opt.Net.MTU || v > 1<<24 {
		return opt, fmt.Errorf("--tx-burst %d: want one packet (--mtu %d) to 16777216 bytes", v, opt.Net.MTU)
	}
	opt.Net.BurstBytes = c.Int("tx-burst")
	if opt.Net.ClockPPM, err = clockPPM(c); err != nil {
		return opt, err
	}
	opt.Net.LinkGbps, opt.Net.BufferBytes, opt.Net.Seed = c.Float64("link-gbps"), c.Int("buffer"), c.Uint64("seed")
	if v := c.Float64("buffer-alpha"); !(v >= 0 && v <= 64) {
		return opt, fmt.Errorf("--buffer-alpha %v: want 0 (off) to 64", v)
	}
	opt.Net.BufferAlpha = c.Float64("buffer-alpha")
	return opt, nil
}

// policyFlags reads how a policy is read, as nicc sim and nicc agent share the flags: --sdk,
// --format, --inputs (with --history and --features), --handler and the RL-CC parameters.
func policyFlags(c *cli.Context, opt *lab.SimOptions) error {
	var err error
	if opt.SDK, err = targets.Parse(c.String("sdk")); err != nil {
		return fmt.Errorf("--sdk: %w", err)
	}
	if opt.Format, err = formats.Lookup(c.String("format")); err != nil {
		return err
	}
	if opt.Inputs, err = modelInputs(c); err != nil {
		return err
	}
	if opt.Handler, err = artifact.ParseHandler(c.String("handler")); err != nil {
		return fmt.Errorf("--handler: %w", err)
	}
	opt.Params, opt.ParamSources, err = rlccParams(c)
	return err
}

// clockPPMFlag is nicc sim's and diff --closed-loop's NIC clock tolerance.
var clockPPMFlag = &cli.Float64Flag{Name: "clock-ppm", Value: lab.StandardClockPPM,
	Usage: fmt.Sprintf("each NIC's clock is off its nominal frequency by a seeded amount within ± this many ppm, 0 to %d (0: one ideal clock for every NIC)", lab.MaxClockPPM)}

// clockPPM is --clock-ppm, checked.
func clockPPM(c *cli.Context) (float64, error) {
	v := c.Float64("clock-ppm")
	if !(v >= 0 && v <= lab.MaxClockPPM) {
		return 0, fmt.Errorf("--clock-ppm %v: want 0 to %d", v, lab.MaxClockPPM)
	}
	return v, nil
}

// durationFlags parses each named time flag (20ms, 500us, 800ns) into its nanoseconds; the
// optional ones are left alone when not given. A time that is not positive, or is over an
// hour (netsim's bound on a run), is an error.
func durationFlags(c *cli.Context, dst map[string]*int64, optional ...string) error {
	for _, name := range slices.Sorted(maps.Keys(dst)) {
		ns := dst[name]
		if !c.IsSet(name) && slices.Contains(optional, name) {
			continue
		}
		d, err := time.ParseDuration(c.String(name))
		if err != nil || d <= 0 || d.Nanoseconds() > lab.MaxSimTimeNs {
			return fmt.Errorf("--%s %q: want a positive time up to %v, such as 20ms, 500us or 800ns", name, c.String(name), time.Duration(lab.MaxSimTimeNs))
		}
		*ns = d.Nanoseconds()
	}
	return nil
}

// runSimTheory is nicc sim --theory: the NIC paper's Eq. 2 against the policy's measured
// RTT inflation on many-to-one.
func runSimTheory(c *cli.Context) error {
	if c.NArg() > 0 || c.IsSet("flows") {
		return fmt.Errorf("--theory takes no SCENARIO or --flows: it runs many-to-one at the flow counts it lists")
	}
	var flows []int
	if v := c.String("theory"); v != "all" {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("--theory %q: want flow counts, comma separated, or all", v)
			}
			flows = append(flows, n)
		}
	}
	opt, err := simOptions(c)
	if err != nil {
		return err
	}
	opt.Policy, opt.PlotDir = c.String("policy"), c.String("out")
	r, err := lab.SimTheory(opt, flows)
	if err != nil {
		return err
	}
	warn(c, r.Warnings)
	return printReport(c, r)
}

// runSimMatrix is nicc sim --matrix: the runs of one shard, with a progress bar on a
// terminal.
func runSimMatrix(c *cli.Context) error {
	if c.NArg() > 0 || c.IsSet("policy") || c.IsSet("flows") || c.IsSet("out") {
		return fmt.Errorf("--matrix takes no SCENARIO, --policy, --flows or --out: the matrix file gives them")
	}
	i, n, err := lab.ParseShard(c.String("shard"))
	if err != nil {
		return err
	}
	m, err := lab.ReadSimMatrix(c.String("matrix"))
	if err != nil {
		return err
	}
	opt, err := simOptions(c)
	if err != nil {
		return err
	}
	bar, done := progressBars(c)
	defer done()
	r, err := lab.RunSimMatrix(m, i, n, opt, bar)
	if err != nil {
		return err
	}
	warn(c, r.Warnings())
	return printHealthy(c, r)
}

func simMergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the --json outputs of a matrix's shards into the whole matrix's",
		ArgsUsage: "SHARD.json...",
		Description: `Reads the shards' nicc sim --matrix --json outputs and prints the whole matrix's, byte for
byte what one unsharded run prints with --json. Shards of different matrices or run with
different flags (the field is named), a policy file that changed between runs, a run given
twice, missing, contradicting its index or without a result, and text after a shard's JSON
are errors naming the shard (exit 2).

  nicc sim merge --json shard-*.json > sweep-result.json`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			var shards []*lab.SimMatrixReport
			for _, f := range c.Args().Slice() {
				r, err := lab.ReadSimShard(f)
				if err != nil {
					return err
				}
				shards = append(shards, r)
			}
			r, err := lab.MergeSimShards(shards, c.Args().Slice())
			if err != nil {
				return err
			}
			return printReport(c, r)
		},
	}
}
