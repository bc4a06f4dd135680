package main

import (
	"fmt"

	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/termtext"
	"github.com/urfave/cli/v2"
)

// healthFlagNames are the flags of healthFlags, for the commands that refuse them outside a
// closed-loop run.
var healthFlagNames = []string{"max-drop-gbps", "max-eq2-ratio", "min-su"}

// healthFlags are the absolute limits of a closed-loop run, nicc sim's and each side of nicc
// diff --closed-loop's (lab.HealthLimits); what the defaults rest on is in their usage.
func healthFlags(prefix string) []cli.Flag {
	d := lab.DefaultHealth
	return []cli.Flag{
		&cli.Float64Flag{Name: "max-drop-gbps", Value: d.MaxDropGbps, Usage: prefix + "health: the most data the switch may drop in the window, Gb/s (a policy in control drops nothing)"},
		&cli.Float64Flag{Name: "max-eq2-ratio", Value: d.MaxEq2Ratio, Usage: prefix + "health: the most mean RTT inflation over the NIC paper's Eq. 2, target·√N + β (N flows per receiver port); the shipped RL-CC models measure 0.93-1.02×, Swift up to 1.5× at 128 flows, a full buffer 20×"},
		&cli.Float64Flag{Name: "min-su", Value: d.MinSU, Usage: prefix + "health: the least switch utilization, percent; the shipped RL-CC models measure 97.5-100% on many-to-one 16 and 128, Swift 97-98%, a network fed its inputs in the wrong order 88-91%"},
	}
}

// healthLimits are the health flags' values (compiler checks them).
func healthLimits(c *cli.Context) *lab.HealthLimits {
	return &lab.HealthLimits{MaxDropGbps: c.Float64("max-drop-gbps"), MaxEq2Ratio: c.Float64("max-eq2-ratio"), MinSU: c.Float64("min-su")}
}

// warn prints each of a report's warnings (the sanity probe's) as one line on standard error,
// whatever the output format: --json carries them in the report too.
func warn(c *cli.Context, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(c.App.ErrWriter, "nicc: warning: %s\n", termtext.Printable(w))
	}
}
