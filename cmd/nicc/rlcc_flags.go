package main

import (
	"fmt"

	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/urfave/cli/v2"
)

// inputsFlag renames a model's inputs after loading, on every command that reads a model.
var inputsFlag = &cli.StringFlag{Name: "inputs",
	Usage: "rename the model's inputs, e.g. a_prev,o,a_prev2,o_prev for an export that calls them input[0]..input[3] (one name per input)"}

// handlerFlag is --handler of the commands that sample RL-CC states without compiling (diff,
// distill); compile's own says what it compiles.
var handlerFlag = &cli.StringFlag{Name: "handler", Value: "auto",
	Usage: "rlcc (the model is an RL-CC policy: sample its states, use its Q16 grid), none, or auto (rlcc when the 4 inputs are named a_prev, o, a_prev2, o_prev)"}

// rlccParamFlag is one RL-CC parameter's flag and its default (nicsdk's).
type rlccParamFlag struct {
	name  string
	def   float64
	usage string
}

var rlccParamFlags = [...]rlccParamFlag{
	{"rlcc-target", nicsdk.DefaultTarget, "RL-CC target queueing (inflation over beta), 0 to 16"},
	{"rlcc-beta", nicsdk.DefaultBeta, "RL-CC RTT inflation taken as no queue, 0 to 256"},
	{"rlcc-scale", nicsdk.DefaultScale, "RL-CC observation scale, above 0 up to 256 (the sampler's o spans [-T, 100T], T = target·scale)"},
	{"rlcc-min-rate", nicsdk.DefaultMinRate, "RL-CC lowest rate, a fraction of line rate above 0"},
	{"rlcc-init-rate", nicsdk.DefaultInitRate, "RL-CC rate of a new flow, a fraction of line rate from the min rate to 1"},
}

// rlccFlags are the RL-CC parameters' flags.
func rlccFlags() []cli.Flag {
	var fs []cli.Flag
	for _, f := range rlccParamFlags {
		fs = append(fs, &cli.Float64Flag{Name: f.name, Value: f.def, Usage: f.usage})
	}
	return fs
}

// rlccParams are the RL-CC parameters the flags give, validated by nicsdk. An error names
// the flag (or, for rates that only clash together, both rate flags).
func rlccParams(c *cli.Context) (nicsdk.Params, error) {
	var v, def [len(rlccParamFlags)]float64
	for i, f := range rlccParamFlags {
		v[i], def[i] = c.Float64(f.name), f.def
	}
	p, err := nicsdk.NewParams(v[0], v[1], v[2], v[3], v[4])
	if err == nil {
		return p, nil
	}
	for i, f := range rlccParamFlags {
		alone := def
		alone[i] = v[i]
		if _, e := nicsdk.NewParams(alone[0], alone[1], alone[2], alone[3], alone[4]); e != nil {
			return nicsdk.Params{}, fmt.Errorf("--%s %v: %v", f.name, v[i], e)
		}
	}
	return nicsdk.Params{}, fmt.Errorf("--rlcc-min-rate %v --rlcc-init-rate %v: %v", v[3], v[4], err)
}

// modelInputs is --inputs, parsed.
func modelInputs(c *cli.Context) ([]string, error) {
	return compiler.ParseInputs(c.String("inputs"))
}
