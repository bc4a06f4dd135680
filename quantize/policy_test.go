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
