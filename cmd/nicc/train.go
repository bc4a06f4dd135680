package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/urfave/cli/v2"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train an RL-CC policy in closed loop (ADPG in nicc's network simulator) and write it as a nicc model",
		ArgsUsage: " ",
		Description: `Trains the RL-CC MLP, (a_{t-1}, o_t, a_{t-2}, o_{t-1}) → 12 → 12 → 1 (ReLU, no biases,
tanh), or with --arch lstm the RL-CC LSTM (the window → 12 ReLU → LSTM 12 → 1 tanh, each
flow with its own h and c, backpropagated through each flow's whole rollout), with ADPG, the RL-CC papers' deterministic on-policy gradient: each step runs one
rollout of every training scenario (many-to-one with --flows flows, by default 2, 4 and 8)
in nicc sim's network, the policy deciding in the handler's real-number twin, and weighs the
gradient of every decision's output by δ = target − max(RTT-inflation − β, 0)·√rate, averaged,
for one Adam step. A seed gives the same policy.

One departure from the papers, measured: the policy reads o = −scale·δ, so pure ADPG
(--action-penalty 0) drives it to the bang-bang y = −sign(o), and flows sharing a bottleneck
settle at unequal rates (16→1: fairness 15 to 17, min/max × 100). --action-penalty λ weighs
each gradient by δ − λ·y instead (the reward gains −λ·y²/2), whose optimum is the
proportional y = −o/(λ·scale): the default λ = 1 (gain 1/12) trains a policy that shares
fairly in nicc's network and in NVIDIA's CCsim, whose TX events are 4 KB at any rate, so a slow
flow decides seldom (16→1 through its compiled firmware: SU 98.5%, FR 99.1, no drops;
docs/CALIBRATION.md). λ = 1/6, the default before, shares fairly here but splits 16 flows into
rate groups there (FR 49 to 51).

The handler's base RTT is, unless --rlcc-base-rtt says otherwise, the simulated network's
empty-path RTT (4.02 µs by default), the papers' base-RTT; compile the policy with the same
--rlcc-base-rtt. Past about 1000 flows, the default minimum rate of 1/1000 of line rate
already oversubscribes the link: judge and compile it for many flows with --rlcc-min-rate
0.00001 (the papers go to 8192 flows).

It writes DIR/policy.json (nicc JSON: compile it, distill it, diff it, sim it), the same
policy as DIR/policy.onnx (opset 13, float32 weights, the input names in the input's
doc_string; the weights stay float32 values all through training, so both files hold exactly
the policy trained), and DIR/reward_curve.csv (each step's mean δ and mean |δ|) with its plot
(.png, .svg), and measures the policy on unseen many-to-one 16→1 and 128→1 for 100 ms each.
Memory: a rollout keeps each decision for the gradient (200 bytes an MLP's, 2400 an LSTM's,
at most one a flow and base RTT); a training whose largest rollout would need more than
` + fmt.Sprint(memlimit.Limit>>30) + ` GiB is refused before it starts, in one line with the estimate (--arch lstm fits
rollouts up to about 0.85 s, the MLP about 10 s). A step's rollouts run at once, one a CPU,
when together they fit that limit, else one at a time: the policy is the same either way.
--lr is in (0, 1), --iterations 1 to
1000000, --action-penalty 0 to 100, --rollout at most 1h.

Then judge what a compile of it does in closed loop:

  nicc compile build/train/policy.json --target trees --out build/trees
  nicc diff build/train/policy.json --closed-loop --against build/trees

  nicc train --out build/train
  nicc train --out build/train --iterations 1000 --lr 0.003 --seed 7 --rlcc-target 0.05
  nicc train --out build/train-lstm --arch lstm`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR`", Required: true},
			&cli.IntFlag{Name: "iterations", Value: 400, Usage: "Adam steps (each runs every training scenario once)"},
			&cli.Float64Flag{Name: "lr", Value: 0.003, Usage: "Adam's learning rate"},
			&cli.Float64Flag{Name: "action-penalty", Value: lab.DefaultActionPenalty, Usage: "λ: each decision's gradient weight is δ − λ·y (0 is the papers' ADPG, which trains a bang-bang, unfair policy)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the initial weights and the rollouts"},
			&cli.StringFlag{Name: "flows", Value: "2,4,8", Usage: "the many-to-one training scenarios' flow counts"},
			&cli.StringFlag{Name: "arch", Value: lab.TrainMLP, Usage: "the network to train: mlp (4 → 12 → 12 → 1) or lstm (4 → 12 ReLU → LSTM 12 → 1 tanh, the testdata LSTM's shape; backpropagated through each flow's whole rollout)"},
			&cli.StringFlag{Name: "rollout", Value: "10ms", Usage: "simulated time of one rollout"},
			jsonFlag,
		}, rlccFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("train takes no arguments, got %d", c.NArg())
			}
			p, src, err := rlccParams(c)
			if err != nil {
				return err
			}
			var flows []int
			for _, f := range strings.Split(c.String("flows"), ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 || n > 64 {
					return fmt.Errorf("--flows %q: want flow counts from 1 to 64, comma separated", c.String("flows"))
				}
				flows = append(flows, n)
			}
			if v := c.String("arch"); v != lab.TrainMLP && v != lab.TrainLSTM {
				return fmt.Errorf("--arch %q: want %s or %s", v, lab.TrainMLP, lab.TrainLSTM)
			}
			if v := c.Int("iterations"); v < 1 || v > lab.MaxTrainIterations {
				return fmt.Errorf("--iterations %d: want 1 to %d", v, lab.MaxTrainIterations)
			}
			if v := c.Float64("lr"); !(v > 0 && v < 1) {
				return fmt.Errorf("--lr %v: want it in (0, 1)", v)
			}
			if v := c.Float64("action-penalty"); !(v >= 0 && v <= lab.MaxActionPenalty) {
				return fmt.Errorf("--action-penalty %v: want 0 to %v", v, lab.MaxActionPenalty)
			}
			opt := lab.ADPGOptions{Out: c.String("out"), Iterations: c.Int("iterations"), Seed: c.Uint64("seed"),
				LR: c.Float64("lr"), Flows: flows, Params: p, ParamSources: src, ActionPenalty: c.Float64("action-penalty"), Policy: c.String("arch")}
			if err := durationFlags(c, map[string]*int64{"rollout": &opt.DurationNs}); err != nil {
				return err
			}
			var done func()
			opt.Progress, done = progressBars(c)
			defer done()
			r, err := lab.Train(opt)
			if err != nil {
				return err
			}
			return printReport(c, r)
		},
	}
}
