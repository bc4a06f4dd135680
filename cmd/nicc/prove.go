package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/prove"
	"github.com/urfave/cli/v2"
)

func proveCommand() *cli.Command {
	var names []string
	for _, k := range prove.Kinds {
		names = append(names, string(k))
	}
	return &cli.Command{
		Name:      "prove",
		Usage:     "prove what a compiled RL-CC policy does over the handler's whole input domain, or find the input that breaks it",
		ArgsUsage: "DIR",
		Description: `Decides behavioural properties of a compile's policy on the integer semantics the firmware
runs (the golden model verify held it to), over every input the RL-CC handler can feed it:
each policy input over its declared raw range on its grid (a_prev and a_prev2 within the
action map's [0.8333, 1.2], o within [-T, 128), ...), independently, under the compile's
parameters. T = target·scale is o at twice the target (o = 0 at the target, -T at an RTT
inflation at or below beta).

Properties (--property, repeatable; all by default):
  cuts-when-congested[:k]   for every state with o >= k·T, the multiplier is at most 1: the
                            firmware never raises a flow's rate deep in congestion (k 1)
  raises-when-idle[:k]      for every state with o <= -k·T, the multiplier is at least 1:
                            it never cuts an idle flow (k in (0, 1], 1: o's floor)
  monotone-in-o             with the other inputs fixed, the multiplier never increases as o
                            does
  bounded-step[:lo..hi]     the multiplier stays within [lo, hi] (the action map's bounds,
                            [0.8333, 1.2], by default): the compiled code, not the map
  rate-in-range             the handler's new rate stays within [min rate, line rate] for
                            every context, corrupted ones included, and every event

How: a tree ensemble exactly, over every cell of its partition (each input cut at its
thresholds: in a cell every tree reaches one leaf). An integer MLP by interval propagation
through its integer network with the exact rounding, branch and bound over input boxes
until every box is proven or a box's centre breaks the property, within --search-time
(the share proven is reported); its monotonicity, and an LSTM (one step, from any memory),
by a search for counterexamples: refuted or unknown, never proven. rate-in-range from the
handler's final clamp, with the firmware run on contexts built to break it.

A refuted property prints its counterexample: rows of the policy's inputs, exact, each run
on the golden model and on the firmware in fwsim before it is reported; --out DIR writes
each as DIR/PROPERTY.csv, which nicc eval DIR --input reproduces. Exit 0 when every property
is proven, 1 when one is refuted or unknown, 2 on bad input.

  nicc prove build/rlcc
  nicc prove build/rlcc --property cuts-when-congested:2 --property monotone-in-o
  nicc prove build/mlp --property cuts-when-congested --search-time 60s --out cex --json`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "property", Usage: "a property to prove: " + strings.Join(names, ", ") + " (with its arguments as above); repeatable", DefaultText: "all five, default arguments"},
			&cli.StringFlag{Name: "search-time", Value: "60s", Usage: "how long each property not decided exactly may search (branch and bound, or for counterexamples)"},
			&cli.StringFlag{Name: "out", Usage: "write each counterexample into `DIR` as PROPERTY.csv, rows for nicc eval DIR --input"},
			&cli.StringFlag{Name: "model", Usage: "the model file compiled, when it has moved since (its hash must match the report's)"},
			jsonFlag,
		},
		Action: runProve,
	}
}

func runProve(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("prove takes one compile directory DIR, got %d arguments", c.NArg())
	}
	dir := c.Args().First()
	if !artifact.IsCompileDir(dir) {
		return fmt.Errorf("%s: not a compile directory (no %s): prove reads what nicc compile wrote", dir, artifact.ReportFile)
	}
	props, err := proveProperties("property", c.StringSlice("property"))
	if err != nil {
		return err
	}
	budget, err := time.ParseDuration(c.String("search-time"))
	if err != nil || budget <= 0 || budget > time.Hour {
		return fmt.Errorf("--search-time %q: want a positive time up to 1h, such as 60s", c.String("search-time"))
	}
	cp, err := compiler.OpenCompiled(dir, c.String("model"), artifact.FirmwareFile)
	if err != nil {
		return err
	}
	if cp.Handler() != artifact.HandlerRLCC {
		return fmt.Errorf("%s: compiled without the RL-CC handler (--handler none): its properties are the handler's", dir)
	}
	in, err := proveInput(cp, dir)
	if err != nil {
		return err
	}
	in.Budget = budget
	r, err := prove.Run(in, props)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if out := c.String("out"); out != "" {
		if err := writeCounterexamples(out, r); err != nil {
			return err
		}
	}
	if err := printReport(c, r); err != nil {
		return err
	}
	if !r.Holds() {
		return checkFailed{fmt.Errorf("%s: not every property is proven", dir)}
	}
	return nil
}

// proveProperties parses the properties --flag gave (all, with their defaults, when none).
func proveProperties(flag string, specs []string) ([]prove.Property, error) {
	if len(specs) == 0 {
		for _, k := range prove.Kinds {
			specs = append(specs, string(k))
		}
	}
	var props []prove.Property
	for _, s := range specs {
		p, err := prove.ParseProperty(s)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		props = append(props, p)
	}
	return props, nil
}

// proveInput is cp's golden model with its firmware, DIR's firmware.elf, loaded in fwsim.
func proveInput(cp *compiler.Compiled, dir string) (prove.Input, error) {
	in := prove.Input{Policy: cp.Policy(), Params: cp.Params(), Layout: cp.Layout(), Names: cp.Model().Inputs}
	err := in.LoadFirmware(filepath.Join(dir, artifact.FirmwareFile), cp.Report.Budget.Core.Name)
	return in, err
}

func writeCounterexamples(dir string, r *prove.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, res := range r.Results {
		if ce := res.Counterexample; ce != nil && len(ce.Rows) > 0 {
			base := strings.NewReplacer(":", "_", ".", "_").Replace(res.Property)
			for k, csv := range ce.CSVs() {
				name := base + ".csv"
				if k > 0 {
					name = fmt.Sprintf("%s_%d.csv", base, k+1)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(csv), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
