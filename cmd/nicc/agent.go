package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nicc-dev/nicc/agent"
	"github.com/nicc-dev/nicc/ccsim"
	"github.com/urfave/cli/v2"
)

var agentHelp = `Answers NVIDIA's CC simulator (CCsim, in NVlabs/RLCC) as the RL-CC papers' Python agent
does, with a policy nicc compiled deciding: CCsim opens a TCP connection to the agent for
every RTT measurement it completes and sends nine unsigned 32-bit fields (the RTT in ns,
NACKs, CNPs, bytes sent, the current rate in fxp20, the interval since the flow's last
report, TX events, the flow tag, the host); the agent answers "receive status: OK", then, in
a separate send, the rate multiplier as an unsigned Q16.

Each (host, flow tag) is a flow with its own 48-byte context, started as nicc sim starts
one; each request is an RTT event of that flow, decided on its context after the context's
rate was set to the rate CCsim reports (the simulator holds the rate); the answer is the
multiplier from that rate to the rate the decision set, in Q16: the policy's a_t within the
handler's clamps. (Sending a_t itself, as the authors' agent sends its action, leaves the
clamps to CCsim, which lets a rate fall far below the compiled min rate, to 169/2^20 of line
rate in one run: a policy driven to its min rate then sinks below it, and decides once a 4 KB
TX event there, a millisecond and more apart.) A policy whose base RTT is 0 decides under
CCsim's 8192 ns, the base RTT the authors' agent divides its RTTs by (--rlcc-base-rtt sets
another).

--policy decides:
  DIR             a nicc compile output directory: its firmware.elf in fwsim, one engine per
                  CCsim host (each host is a NIC), every decision's fwsim cycles logged; with
                  --golden its integer golden model; with --sdk doca its DOCA PCC program
  MODEL           a model file: the float teacher in the RL-CC handler's real-number twin
--multiplier X answers every request with X instead (a fixed law, for calibration).

CCsim runs from its nv_ccsim/sim directory, the agent listening where its omnetpp.ini points
(in the repository's, runs 0-47 of RL_Eval_ManyToOne on 127.0.0.1:5555, 48-95 on 5556, ...;
ccsim_release omnetpp.ini -x CONFIG -g lists them):

  nicc agent --ccsim --policy build/trees --log build/ccsim_16.csv --idle 20s &
  LD_LIBRARY_PATH=../lib NEDPATH=../ned/algo/:../ned/prog_cc:../ned/dctg/ \
    ../bin/ccsim_release omnetpp.ini -c RL_Eval_ManyToOne -r 27 -u Cmdenv

The agent stops on Ctrl-C or SIGTERM, after --idle without a request, or after
--max-requests, and prints what it decided. "rate drift" counts requests whose rate is not
the one the flow's last answer asked for (within CCsim's clamps): answers CCsim did not
apply. With --reply-gap 0 it read the status and the multiplier in one read and took 1.0 (708
of 1,386); with 1 ms a run has 0.1-0.7%, some of them CCsim's own.

--log FILE writes every decision, in order: the request's nine fields as they arrived, the
multiplier answered and the fwsim cycles (CSV; gzipped when FILE ends in .gz). --replay FILE
answers a log's requests without CCsim, in order, and compares every answer with the logged
one: exit 1 when one differs. Replaying a firmware's log with --golden proves the firmware
decided as its golden model on CCsim's own requests:

  nicc agent --ccsim --policy build/trees --golden --replay build/ccsim_16.csv`

func agentCommand() *cli.Command {
	return &cli.Command{
		Name:        "agent",
		Usage:       "answer NVIDIA's CC simulator (CCsim) with a compiled policy deciding, as the RL-CC papers' agent does",
		ArgsUsage:   " ",
		Description: agentHelp,
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "ccsim", Usage: "speak CCsim's agent protocol (NVlabs/RLCC's env/utils/server.py)", Required: true},
			&cli.StringFlag{Name: "policy", Usage: "a compile output `DIR` or a model FILE"},
			&cli.BoolFlag{Name: "golden", Usage: "with a compile DIR: its golden integer model decides, not the firmware"},
			&cli.StringFlag{Name: "sdk", Value: "nicc", Usage: "with a compile DIR: nicc (firmware.elf) or doca (doca_firmware.elf)"},
			&cli.StringFlag{Name: "model", Usage: "with a compile DIR: the model file compiled, when it has moved"},
			&cli.StringFlag{Name: "core", Usage: "core profile for the firmware's cycles (nicc budget --list-cores)", DefaultText: "the compile's"},
			&cli.Float64Flag{Name: "multiplier", Usage: "answer every request with this multiplier, in (0, 65536), and run no policy"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:5555", Usage: "the `ADDRESS` CCsim connects to"},
			&cli.StringFlag{Name: "log", Usage: "write every decision to `FILE` (CSV, gzipped if it ends in .gz)"},
			&cli.StringFlag{Name: "replay", Usage: "answer a decision log's requests (`FILE`) instead of serving, and compare the answers"},
			&cli.StringFlag{Name: "idle", Usage: "stop after this long without a request, once one came, e.g. 20s", DefaultText: "never"},
			&cli.Int64Flag{Name: "max-requests", Usage: "stop after answering this many requests", DefaultText: "no limit"},
			&cli.StringFlag{Name: "reply-gap", Value: "1ms", Usage: "the least time between the status and the multiplier, so that CCsim reads them apart"},
			simHandlerFlag, formatFlag, inputsFlag, historyFlag, featuresFlag, jsonFlag,
		}, rlccFlags()...),
		Action: runAgent,
	}
}

func runAgent(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("agent takes no arguments (the policy is --policy), got %q", c.Args().First())
	}
	opt, err := agentOptions(c)
	if err != nil {
		return err
	}
	a, err := agent.New(opt)
	if err != nil {
		return err
	}
	warn(c, a.Report.Warnings)
	if path := c.String("replay"); path != "" {
		for _, f := range []string{"log", "idle", "max-requests", "listen"} {
			if c.IsSet(f) {
				return fmt.Errorf("--%s serves CCsim; --replay answers a log without it", f)
			}
		}
		log, err := ccsim.ReadLogFile(path, 0)
		if err != nil {
			return err
		}
		run, err := agent.Replay(a, path, log)
		if err != nil {
			return err
		}
		if err := printReport(c, run); err != nil {
			return err
		}
		if !run.SameAsLog() {
			return checkFailed{fmt.Errorf("%s: %d of %d decisions differ from the log", path, run.Decisions-run.Same, run.Decisions)}
		}
		return nil
	}
	sopt, err := serveOptions(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	var log io.Writer
	if path := c.String("log"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		log = f
		if strings.HasSuffix(path, ".gz") {
			zw := gzip.NewWriter(f)
			defer zw.Close()
			log = zw
		}
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "nicc agent: answering CCsim on %s (%s); Ctrl-C stops\n", ln.Addr(), a.Report.Decides)
	}
	run, err := agent.Serve(ctx, a, ln, sopt, log)
	if run != nil {
		run.Log = c.String("log")
		if perr := printReport(c, run); err == nil {
			err = perr
		}
	}
	return err
}

func agentOptions(c *cli.Context) (agent.Options, error) {
	var opt agent.Options
	if c.IsSet("multiplier") {
		m := c.Float64("multiplier")
		if !(m > 0 && m < 65536) {
			return opt, fmt.Errorf("--multiplier %v: want a multiplier in (0, 65536)", m)
		}
		opt.Multiplier = uint32(math.Round(m * ccsim.Q16One))
		if opt.Multiplier == 0 {
			return opt, fmt.Errorf("--multiplier %v is 0 in Q16", m)
		}
		return opt, nil
	}
	if c.String("policy") == "" {
		return opt, fmt.Errorf("agent needs --policy (a compile output DIR or a model FILE) or --multiplier")
	}
	s := &opt.Sim
	s.Policy, s.Golden, s.Model, s.Core = c.String("policy"), c.Bool("golden"), c.String("model"), c.String("core")
	return opt, policyFlags(c, s)
}

func serveOptions(c *cli.Context) (ccsim.ServeOptions, error) {
	opt := ccsim.ServeOptions{MaxRequests: c.Int64("max-requests")}
	if opt.MaxRequests < 0 {
		return opt, fmt.Errorf("--max-requests %d: want at least 1", opt.MaxRequests)
	}
	for _, f := range []struct {
		name string
		dst  *time.Duration
		max  time.Duration
	}{{"idle", &opt.Idle, 24 * time.Hour}, {"reply-gap", &opt.ReplyGap, time.Second}} {
		if !c.IsSet(f.name) && f.name == "idle" {
			continue
		}
		d, err := time.ParseDuration(c.String(f.name))
		if err != nil || d < 0 || d > f.max {
			return opt, fmt.Errorf("--%s %q: want a duration from 0 to %s, e.g. 20s", f.name, c.String(f.name), f.max)
		}
		*f.dst = d
	}
	return opt, nil
}
