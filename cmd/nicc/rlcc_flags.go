package main

import (
	"github.com/nicc-dev/nicc/compiler"
	"github.com/urfave/cli/v2"
)

// inputsFlag renames a model's inputs after loading, on every command that reads a model.
var inputsFlag = &cli.StringFlag{Name: "inputs",
	Usage: "rename the model's inputs, e.g. a_prev,o,a_prev2,o_prev for an export that calls them input[0]..input[3] (one name per input)"}

// handlerFlag is --handler of the commands that sample RL-CC states without compiling (diff,
// distill); compile's own says what it compiles.
var handlerFlag = &cli.StringFlag{Name: "handler", Value: "auto",
	Usage: "rlcc (the model is an RL-CC policy: sample its states, use its Q16 grid), none, or auto (rlcc when the 4 inputs are named a_prev, o, a_prev2, o_prev)"}

// simHandlerFlag is nicc sim's --handler: the same flag as compile's, for a model file that
// decides (sim runs RL-CC policies only, so none is refused).
var simHandlerFlag = &cli.StringFlag{Name: "handler", Value: "auto",
	Usage: "with a model FILE: rlcc (read its 4 inputs as the RL-CC window by position, as nicc compile --handler rlcc does) or auto (rlcc when the 4 inputs are named a_prev, o, a_prev2, o_prev); none is refused: a model decides only as an RL-CC policy"}

// rlccFlags are the RL-CC parameters' flags (rlcc.ParamFields, through compiler).
func rlccFlags() []cli.Flag {
	var fs []cli.Flag
	for _, f := range compiler.RLCCParamFields() {
		fs = append(fs, &cli.Float64Flag{Name: f.Flag, Value: f.Default, Usage: f.Usage})
	}
	return fs
}

// rlccParams are the RL-CC parameters the flags give, in fixed point and validated. An error
// names the flag (or, for rates that only clash together, both rate flags).
func rlccParams(c *cli.Context) (compiler.Params, error) {
	var v []float64
	for _, f := range compiler.RLCCParamFields() {
		v = append(v, c.Float64(f.Flag))
	}
	return compiler.NewParams(v)
}

// modelInputs is --inputs, parsed.
func modelInputs(c *cli.Context) ([]string, error) {
	return compiler.ParseInputs(c.String("inputs"))
}
