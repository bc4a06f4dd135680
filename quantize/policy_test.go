package quantize_test

import (
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// TestLSTMPolicyFold: unfolded, Call is Step; folded for RL-CC, Call returns the handler's
// multiplier of Step's y, the state evolves the same way, and Fold tabulates the multiplier
// of every output value.
func TestLSTMPolicyFold(t *testing.T) {
	_, ir, rows := shippedLSTM(t, 2000)
	var p quantize.Policy = ir
	if p.ReturnsMultiplier() || p.Golden() != "LSTMIR.Step" || p.StateWords() != ir.StateWords() || p.Hash() != ir.ModelHash {
		t.Fatalf("unfolded LSTM policy: multiplier %v, golden %q, %d words", p.ReturnsMultiplier(), p.Golden(), p.StateWords())
	}
	folded := *ir
	folded.FoldRLCC()
	if !folded.ReturnsMultiplier() || len(folded.Fold) != len(ir.OutTable) {
		t.Fatalf("folded: multiplier %v, %d fold entries", folded.ReturnsMultiplier(), len(folded.Fold))
	}
	for k, y := range ir.OutTable {
		if folded.Fold[k] != nicsdk.Multiplier(y) {
			t.Fatalf("Fold[%d] = %d, want nicsdk.Multiplier(%d) = %d", k, folded.Fold[k], y, nicsdk.Multiplier(y))
		}
	}
	st, stF, stP := make([]uint32, ir.StateWords()), make([]uint32, ir.StateWords()), make([]uint32, ir.StateWords())
	for i, row := range rows[:500] {
		x := make([]int32, len(row))
		for j, v := range row {
			x[j] = ir.Inputs[j].Quantize(v)
		}
		y := ir.Step(x, st)
		if got := p.Call(x, stP); got != y {
			t.Fatalf("row %d: unfolded Call %d, Step %d", i, got, y)
		}
		if got := folded.Call(x, stF); got != int32(nicsdk.Multiplier(y)) {
			t.Fatalf("row %d: folded Call %d, want the multiplier %d of y %d", i, got, nicsdk.Multiplier(y), y)
		}
		if !slices.Equal(st, stF) || !slices.Equal(st, stP) {
			t.Fatalf("row %d: the states diverge", i)
		}
	}
}

// TestMLPEvalTrace: EvalTrace's y is Eval's, with one slice of outputs per hidden layer, each
// inside the layer's proven range.
func TestMLPEvalTrace(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  quantize.MLPOptions
	}{{"int16", quantize.MLPOptions{WeightBits: 16, ActBits: 16, ChannelScales: true}}, {"int8", quantize.MLPOptions{ActBits: 8, TanhBits: 8}}} {
		_, ir, calib := teacherMLP(t, c.opt)
		for i, row := range calib[:300] {
			x := make([]int32, len(row))
			for j, v := range row {
				x[j] = ir.Inputs[j].Quantize(v)
			}
			y, hidden := ir.EvalTrace(x)
			if y != ir.Eval(x) || len(hidden) != len(ir.Layers)-1 {
				t.Fatalf("%s row %d: EvalTrace y %d, Eval %d, %d hidden layers of %d", c.name, i, y, ir.Eval(x), len(hidden), len(ir.Layers))
			}
			for k, h := range hidden {
				l := &ir.Layers[k]
				if len(h) != l.Out {
					t.Fatalf("%s layer %d: %d outputs, want %d", c.name, k, len(h), l.Out)
				}
				for _, v := range h {
					if v > l.ZMax() || v < -l.ZMax()-1 {
						t.Fatalf("%s layer %d: output %d beyond int%d", c.name, k, v, l.Bits)
					}
				}
			}
		}
	}
}
