package golden

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// Params are the RL-CC handler's parameters in fixed point, as the firmware holds them
// (nicsdk.Params); NewParams makes them from the real numbers the flags give.
type Params = nicsdk.Params

// RLCCParamFields describe the RL-CC parameters for the CLI's flags (rlcc.ParamFields).
func RLCCParamFields() []rlcc.ParamField { return rlcc.ParamFields }

// NewParams are the RL-CC parameters whose real values are given in RLCCParamFields' order, in
// fixed point and validated; an error names the flag at fault.
func NewParams(values []float64) (Params, error) {
	p := rlcc.Defaults()
	for i, f := range rlcc.ParamFields {
		if i < len(values) {
			f.Set(&p, values[i])
		}
	}
	return p.Fixed()
}

// inputsHint is how a user names a model's inputs so that the RL-CC handler reads them: the
// one fix every command that reads a model has (--inputs).
var InputsHint = "name the inputs: " + LayoutsAccepted

// rlccHint is how a user turns on the RL-CC handler for a model whose inputs are not named
// in its layout, on a command that has --handler.
var RLCCHint = "--handler rlcc (inputs by position, newest state first), or " + InputsHint

// noRLCCStates is the error for a command that would sample RL-CC states under a handler
// that is not RL-CC: it names the flags that fix it.
func noRLCCStates(path string, asked artifact.Handler, inputs []string) error {
	why := "--handler none"
	if asked == artifact.HandlerAuto {
		why = fmt.Sprintf("a model whose inputs (%s) are not named in an RL-CC layout", strings.Join(inputs, ", "))
	}
	return fmt.Errorf("%s: %s needs calibration rows: sample RL-CC states with %s, or give rows with --calib ROWS.csv", path, why, RLCCHint)
}

// rlccInputs are the RL-CC grid under the model's input names, noting where each format came from.
func (c *Model) rlccInputs() []quantize.Input {
	inputs := quantize.GridInputs(rlcc.Grid(c.Params, c.Layout()))
	for i := range inputs {
		c.InputSources = append(c.InputSources, "nicsdk RL-CC range of "+inputs[i].Name)
		inputs[i].Name = c.Float.Inputs[i]
	}
	return inputs
}
