package quantize

import (
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// Policy is an integer policy as its firmware computes it, in Go: the golden model that the
// host C, the UBSan build and fwsim are checked against, that compile measures fidelity
// with, and that the closed-loop simulator runs. TreeIR, MLPIR and LSTMIR implement it.
type Policy interface {
	// InputFormats are the fixed-point formats of the raw int32 inputs, in order.
	InputFormats() []Input
	// StateWords is how many uint32 words of per-flow state a call keeps; 0 is stateless.
	StateWords() int
	// Call is one nicc_policy call on the raw inputs x: what it returns, with state
	// (StateWords words; nil when there are none) read and replaced.
	Call(x []int32, state []uint32) int32
	// ReturnsMultiplier says Call returns the RL-CC rate multiplier in Q16 (the action map
	// folded into the policy's output table) rather than y.
	ReturnsMultiplier() bool
	// OutValue is a y in the output format as a real number.
	OutValue(y int32) float64
	// Golden names the golden evaluator in reports ("TreeIR.Eval", ...).
	Golden() string
	// Hash is the source model's identity (model.Hash).
	Hash() string
}

var (
	_ Policy = (*TreeIR)(nil)
	_ Policy = (*MLPIR)(nil)
	_ Policy = (*LSTMIR)(nil)
)

func (ir *TreeIR) InputFormats() []Input                { return ir.Inputs }
func (ir *TreeIR) StateWords() int                      { return 0 }
func (ir *TreeIR) Call(x []int32, _ []uint32) int32     { return ir.Eval(x) }
func (ir *TreeIR) ReturnsMultiplier() bool              { return false }
func (ir *TreeIR) Golden() string                       { return "TreeIR.Eval" }
func (ir *TreeIR) Hash() string                         { return ir.ModelHash }
func (ir *MLPIR) InputFormats() []Input                 { return ir.Inputs }
func (ir *MLPIR) StateWords() int                       { return 0 }
func (ir *MLPIR) Call(x []int32, _ []uint32) int32      { return ir.Returned(x) }
func (ir *MLPIR) ReturnsMultiplier() bool               { return ir.Fold != nil }
func (ir *MLPIR) Golden() string                        { return "MLPIR.Eval" }
func (ir *MLPIR) Hash() string                          { return ir.ModelHash }
func (ir *LSTMIR) InputFormats() []Input                { return ir.Inputs }
func (ir *LSTMIR) Call(x []int32, state []uint32) int32 { return ir.Returned(ir.Step(x, state)) }
func (ir *LSTMIR) ReturnsMultiplier() bool              { return ir.Fold != nil }
func (ir *LSTMIR) Golden() string                       { return "LSTMIR.Step" }
func (ir *LSTMIR) Hash() string                         { return ir.ModelHash }

// FoldRLCC folds the RL-CC action map into the output table: Fold becomes the multiplier
// of each of its 2·OutHalf values of y, which Call then returns (the handler's RLCC_OUT_M).
func (ir *LSTMIR) FoldRLCC() {
	ir.Fold = make([]uint32, len(ir.OutTable))
	for k, y := range ir.OutTable {
		ir.Fold[k] = rlcc.FixedMultiplier(y)
	}
}

// Returned is what Call returns for the step's y: the multiplier when Fold is set, else y.
func (ir *LSTMIR) Returned(y int32) int32 {
	if ir.Fold != nil {
		return int32(rlcc.FixedMultiplier(y))
	}
	return y
}

// Predict is the model output p's raw output y stands for: a tree ensemble's with its
// transform (TreeIR.Predict), a network's y as a real number.
func Predict(p Policy, y int32) float64 {
	if ir, ok := p.(*TreeIR); ok {
		return ir.Predict(y)
	}
	return p.OutValue(y)
}

// Y is p's y for a stateless call on the raw inputs x that returned returned: that, except
// from a folded MLP, whose Call returns the multiplier instead of y.
func Y(p Policy, x []int32, returned int32) int32 {
	if ir, ok := p.(*MLPIR); ok && ir.Fold != nil {
		return ir.Eval(x)
	}
	return returned
}

// QuantizeInputs is the real inputs xf in p's input formats.
func QuantizeInputs(p Policy, xf []float64) []int32 {
	x := make([]int32, len(xf))
	for i, v := range xf {
		x[i] = p.InputFormats()[i].Quantize(v)
	}
	return x
}

// Out is what the RL-CC handler takes from p's return: the multiplier (a folded output
// table) or y.
func Out(p Policy) nicsdk.PolicyOut {
	if p.ReturnsMultiplier() {
		return nicsdk.OutM
	}
	return nicsdk.OutY
}
