package main

import (
	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/golden"
	"github.com/urfave/cli/v2"
)

// inputsFlag names a model's inputs after loading, on every command that reads a model, with
// historyFlag and featuresFlag shaping its generators.
var inputsFlag = &cli.StringFlag{Name: "inputs",
	Usage: "name the model's inputs, one name per input in the model's order, in any RL-CC layout (a_prev2,o_prev,a_prev,o is NVlabs/RLCC's; names: a_prev, a_prev2 ..., o, o_prev, o_prev2 ..., or action, adpg_reward, rtt_inflation, cur_rate with _prev, _prev2 ...): the model is reordered to the handler's window when loaded. Or generate them: 'authors' (NVlabs/RLCC's FeatureHistory, oldest state first) or 'nicc' (newest first), shaped by --history and --features"}

var historyFlag = &cli.IntFlag{Name: "history", DefaultText: "2",
	Usage: "with --inputs authors or nicc: the `K` states of the window (the authors' history_length)"}

var featuresFlag = &cli.StringFlag{Name: "features",
	Usage: "with --inputs authors or nicc: each state's features, in the authors' agent_features order (`LIST` of action, adpg_reward, rtt_inflation, cur_rate; default " + golden.DefaultFeatures + ", the authors' config/rlcc.yaml)"}

// handlerFlag is --handler of the commands that sample RL-CC states without compiling (diff,
// distill); compile's own says what it compiles.
var handlerFlag = &cli.StringFlag{Name: "handler", Value: "auto",
	Usage: "rlcc (the model is an RL-CC policy: sample its states, use its Q16 grid), none, or auto (rlcc when the inputs are named in an RL-CC layout: see --inputs)"}

// simHandlerFlag is nicc sim's --handler: the same flag as compile's, for a model file that
// decides (sim runs RL-CC policies only, so none is refused).
var simHandlerFlag = &cli.StringFlag{Name: "handler", Value: "auto",
	Usage: "with a model FILE: rlcc (read its 4 inputs as the RL-CC window by position, as nicc compile --handler rlcc does) or auto (rlcc when the 4 inputs are named a_prev, o, a_prev2, o_prev); none is refused: a model decides only as an RL-CC policy"}

// rlccFlags are the RL-CC parameters' flags (rlcc.ParamFields, through compiler).
func rlccFlags() []cli.Flag {
	var fs []cli.Flag
	for _, f := range golden.RLCCParamFields() {
		fs = append(fs, &cli.Float64Flag{Name: f.Flag, Value: f.Default, Usage: f.Usage})
	}
	return fs
}

// rlccParams are the RL-CC parameters the flags give (over the defaults), in fixed point and
// validated, and the flags the command line set: a command takes those from the flags, the
// others from the model file when it carries them. An error names the flag (or, for rates
// that only clash together, both rate flags).
func rlccParams(c *cli.Context) (golden.Params, artifact.ParamSources, error) {
	var v []float64
	var set []string
	for _, f := range golden.RLCCParamFields() {
		v = append(v, c.Float64(f.Flag))
		if c.IsSet(f.Flag) {
			set = append(set, f.Flag)
		}
	}
	p, err := golden.NewParams(v)
	return p, golden.FlagSources(set), err
}

// modelInputs are the input names --inputs, --history and --features give.
func modelInputs(c *cli.Context) ([]string, error) {
	return golden.ParseInputs(golden.InputsSpec{Names: c.String("inputs"), History: c.Int("history"), Features: c.String("features")})
}
