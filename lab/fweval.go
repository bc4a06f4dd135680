package lab

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/target/abi"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// FirmwareEval runs a compile's firmware in fwsim on rows of the model's inputs, one at a time,
// beside the golden model and the float model: nicc eval DIR. Each row is quantized with the
// report's input formats (clamped to their ranges, as the handler clamps) and passed to
// nicc_policy. An LSTM's rows are consecutive steps of one flow from the zero state: the
// firmware's state words stay in emulator memory, the golden model's and the float model's
// run beside them. Under the RL-CC handler the policy's output is mapped to the rate
// multiplier and the new rate from a stated current rate (nicsdk's Multiplier and
// UpdateRate, the Go twins of rlcc.h), so a row reads as one decision.
type FirmwareEval struct {
	*compiler.Compiled
	fw     *abi.Firmware
	float  *RowEval
	golden []uint32 // an LSTM's golden state words
	state  []uint32 // the state words the firmware left
	rate   uint32   // fxp20, the rate before each decision (RL-CC)
}

// FirmwareRow is one row's results.
type FirmwareRow struct {
	X     []int32   `json:"x_raw"` // the quantized inputs nicc_policy got
	Float []float64 `json:"float"` // the float model's output(s) on the row as given
	// Golden and Firmware are what nicc_policy returned: y in Q(OutFrac), or under the RL-CC
	// handler with the multiplier folded into an LSTM's table, the multiplier in Q16.
	Golden   int32 `json:"golden_raw"`
	Firmware int32 `json:"firmware_raw"`
	// GoldenY and FirmwareY are the returns as the model's output (y, or the multiplier).
	GoldenY   float64 `json:"golden"`
	FirmwareY float64 `json:"firmware"`
	// Multiplier (Q16) and Rate (fxp20): the RL-CC handler's decision from the firmware's
	// return, and the golden model's; zero without the handler.
	Multiplier       uint32 `json:"multiplier_q16,omitempty"`
	Rate             uint32 `json:"rate_fxp20,omitempty"`
	GoldenMultiplier uint32 `json:"golden_multiplier_q16,omitempty"`
	Cycles           uint64 `json:"cycles"`
	// Agree: the firmware returned what the golden model did and left the same state.
	Agree bool `json:"agree"`
	// Missing names an input whose value is NaN: a tree ensemble's float model takes it as
	// missing, but the firmware's inputs are integers, so it does not run (only Float is set).
	Missing string `json:"missing,omitempty"`
}

// NewFirmwareEval prepares the firmware of cp to run on rows. rate is the RL-CC rate before
// each decision as a fraction of line rate (0 is 0.5); it is ignored without the handler.
func NewFirmwareEval(cp *compiler.Compiled, rate float64) (*FirmwareEval, error) {
	p, err := fwsim.LookupProfile(cp.Report.Budget.Core.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cp.Dir, err)
	}
	pol, fm := cp.Policy(), cp.Model()
	fw, err := abi.Load(cp.Firmware, p.Name, abi.Shape{Inputs: len(pol.InputFormats()), StateWords: pol.StateWords()})
	if err != nil {
		return nil, err
	}
	fl, err := NewRowEval(fm, fm.NumInputs())
	if err != nil {
		return nil, err
	}
	e := &FirmwareEval{Compiled: cp, fw: fw, float: fl}
	if w := pol.StateWords(); w > 0 {
		e.golden, e.state = make([]uint32, w), make([]uint32, w)
	}
	if params := cp.Params(); cp.Handler() == artifact.HandlerRLCC {
		if rate == 0 {
			rate = DefaultEvalRate
		}
		r := math.Round(rate * nicsdk.LineRate)
		if !(r >= float64(params.MinRate) && r <= nicsdk.LineRate) {
			return nil, fmt.Errorf("rate %v: want a fraction of line rate in [%v, 1] (the minimum rate to line rate)", rate, float64(params.MinRate)/nicsdk.LineRate)
		}
		e.rate = uint32(r)
	}
	return e, nil
}

// DefaultEvalRate is the RL-CC rate, as a fraction of line rate, that nicc eval DIR applies
// each row's multiplier to: half, so that increases and decreases both show (at line rate an
// increase is clamped away).
const DefaultEvalRate = 0.5

// Inputs are the model's input names, in order.
func (e *FirmwareEval) Inputs() []string { return e.Model().Inputs }

// Stateful reports whether rows are steps of one flow (an LSTM).
func (e *FirmwareEval) Stateful() bool { return e.Policy().StateWords() > 0 }

// Folded reports whether nicc_policy returns the RL-CC multiplier rather than y.
func (e *FirmwareEval) Folded() bool { return e.Policy().ReturnsMultiplier() }

// Comparable is the float model's output y in what nicc_policy returns: the RL-CC multiplier
// (rlcc.HandlerMultiplier) when Folded, else y.
func (e *FirmwareEval) Comparable(y float64) float64 {
	if e.Folded() {
		return rlcc.HandlerMultiplier(y)
	}
	return y
}

// Rate is the RL-CC rate before each decision, fxp20.
func (e *FirmwareEval) Rate() uint32 { return e.rate }

// Golden names the golden model's evaluator.
func (e *FirmwareEval) Golden() string { return "quantize." + e.Policy().Golden() }

// Eval runs one row of the model's inputs. A row with NaN runs the float model alone (see
// FirmwareRow.Missing).
func (e *FirmwareEval) Eval(row []float64) (*FirmwareRow, error) {
	pol := e.Policy()
	if len(row) != len(pol.InputFormats()) {
		return nil, fmt.Errorf("%d values; the firmware takes %d inputs", len(row), len(pol.InputFormats()))
	}
	y, err := e.float.Eval(row) // networks refuse NaN
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(row, math.IsNaN); i >= 0 {
		return &FirmwareRow{Float: slices.Clone(y), Missing: e.Model().Inputs[i], Agree: true}, nil
	}
	out := &FirmwareRow{X: quantize.QuantizeInputs(pol, row), Float: slices.Clone(y)}
	// Each step starts from the golden state, so a row that differs does not carry its
	// difference into the next.
	copy(e.state, e.golden)
	out.Firmware, out.Cycles, err = e.fw.Policy(out.X, e.state)
	if err != nil {
		return nil, &budget.CheckError{Err: fmt.Errorf("%s faulted on x = %v: %w", abi.EntryPolicy, out.X, err)}
	}
	out.Golden = pol.Call(out.X, e.golden)
	out.Agree = out.Golden == out.Firmware && slices.Equal(e.state, e.golden)
	out.GoldenY, out.FirmwareY = e.value(out.Golden), e.value(out.Firmware)
	if e.Handler() == artifact.HandlerRLCC {
		out.Multiplier, out.GoldenMultiplier = e.multiplier(out.Firmware), e.multiplier(out.Golden)
		out.Rate = nicsdk.UpdateRate(e.rate, out.Multiplier, e.Params())
	}
	return out, nil
}

// value is what nicc_policy's return v stands for: the multiplier (Q16) when an LSTM's table
// holds it, else the model's output (trees: with their transform, as the report's fidelity).
func (e *FirmwareEval) value(v int32) float64 {
	switch pol := e.Policy(); {
	case pol.ReturnsMultiplier():
		return float64(v) / nicsdk.Q16One
	case pol.StateWords() > 0:
		return pol.OutValue(v) // an LSTM's y: no transform
	}
	return quantize.Predict(e.Policy(), v)
}

// multiplier is the RL-CC handler's multiplier for the policy's return v (OnEventEx).
func (e *FirmwareEval) multiplier(v int32) uint32 {
	if e.Policy().ReturnsMultiplier() {
		return uint32(min(max(v, nicsdk.AMin), nicsdk.AMax))
	}
	return nicsdk.Multiplier(v)
}
