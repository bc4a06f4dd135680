package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/compiler"
	"github.com/urfave/cli/v2"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train an RL-CC policy in closed loop (ADPG in nicc's network simulator) and write it as a nicc model",
		ArgsUsage: " ",
		Description: `Trains the RL-CC MLP, (a_{t-1}, o_t, a_{t-2}, o_{t-1}) → 12 → 12 → 1 (ReLU, no biases,
tanh), with ADPG, the RL-CC papers' deterministic on-policy gradient: each step runs one
rollout of every training scenario (many-to-one with --flows flows, by default 2, 4 and 8)
in nicc sim's network, the policy deciding in the handler's real-number twin, and weighs the
gradient of every decision's output by δ = target − max(RTT-inflation − β, 0)·√rate, averaged,
for one Adam step. A seed gives the same policy.

It writes DIR/policy.json (nicc JSON: compile it, distill it, diff it, sim it), the same
policy as DIR/policy.onnx (opset 13, float32 weights, the input names in the input's
doc_string; the weights stay float32 values all through training, so both files hold exactly
the policy trained), and DIR/reward_curve.csv (each step's mean δ and mean |δ|) with its plot
(.png, .svg), and measures the policy on unseen many-to-one 16→1 and 128→1 for 20 ms each.
Then judge what a compile of it does in closed loop:

  nicc compile build/train/policy.json --target trees --out build/trees
  nicc diff build/train/policy.json --closed-loop --against build/trees

  nicc train --out build/train
  nicc train --out build/train --iterations 1000 --lr 0.003 --seed 7 --rlcc-target 0.05`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output `DIR`", Required: true},
			&cli.IntFlag{Name: "iterations", Value: 400, Usage: "Adam steps (each runs every training scenario once)"},
			&cli.Float64Flag{Name: "lr", Value: 0.003, Usage: "Adam's learning rate"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the initial weights and the rollouts"},
			&cli.StringFlag{Name: "flows", Value: "2,4,8", Usage: "the many-to-one training scenarios' flow counts"},
			&cli.StringFlag{Name: "rollout", Value: "3ms", Usage: "simulated time of one rollout"},
			jsonFlag,
		}, rlccFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("train takes no arguments, got %d", c.NArg())
			}
			p, err := rlccParams(c)
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
			opt := compiler.ADPGOptions{Out: c.String("out"), Iterations: c.Int("iterations"), Seed: c.Uint64("seed"),
				LR: c.Float64("lr"), Flows: flows, Params: p}
			if err := durationFlags(c, map[string]*int64{"rollout": &opt.DurationNs}); err != nil {
				return err
			}
			var done func()
			opt.Progress, done = progressBars(c)
			defer done()
			r, err := compiler.Train(opt)
			if err != nil {
				return err
			}
			return printReport(c, r)
		},
	}
}
