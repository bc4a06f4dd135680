package quantize

import (
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// foldMaxDev is how far (Q16 units) a folded 16-bit table's interpolated multiplier may be from
// the map of the interpolated y: for y >= 0 the map is linear (rounding only), for y < 0 the
// chord of the convex 1/(1 - 0.2y) over a knot interval (at most 4091/2^16 in y) lies above it
// by at most h^2/8 * max m” = 0.0625^2/8 * 0.08 * 2^16 ≈ 2.6 units, plus the roundings.
const foldMaxDev = 4

// TestMLPPolicyFold: folded for RL-CC, Fold holds the multiplier of each table entry, Call
// returns the fold's lookup at the final z while Eval still returns y; at every z of the grid
// the folded result is in [AMin, AMax] and within foldMaxDev of the map of y (exactly it on
// the 8-bit grid). A final layer without a tanh does not fold.
func TestMLPPolicyFold(t *testing.T) {
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(3000, 1)
	if err != nil {
		t.Fatal(err)
	}
	inputs := GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
	for _, opt := range []MLPOptions{
		{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: true},
		{ActBits: 8, TanhBits: 8},
	} {
		ir, err := MLP(m, inputs, rows, opt)
		if err != nil {
			t.Fatal(err)
		}
		if ir.ReturnsMultiplier() || !ir.FoldRLCC() || !ir.ReturnsMultiplier() {
			t.Fatalf("%+v: fold %v", opt, ir.Fold != nil)
		}
		l := &ir.Layers[len(ir.Layers)-1]
		for k, y := range l.OutTable {
			if ir.Fold[k] != int32(nicsdk.Multiplier(y)) {
				t.Fatalf("%+v: Fold[%d] = %d, want the multiplier %d of %d", opt, k, ir.Fold[k], nicsdk.Multiplier(y), y)
			}
		}
		worst := int32(0)
		for z := -l.ZMax() - 1; z <= l.ZMax(); z++ {
			got, want := l.Lookup(ir.Fold, z), int32(nicsdk.Multiplier(l.Lookup(l.OutTable, z)))
			d := max(got-want, want-got)
			worst = max(worst, d)
			if got < nicsdk.AMin || got > nicsdk.AMax || d > foldMaxDev || l.Bits == 8 && d != 0 {
				t.Fatalf("%+v: z %d: folded %d, map of y %d", opt, z, got, want)
			}
		}
		t.Logf("%d-bit grid: folded multiplier within %d of the map of y", l.Bits, worst)
		for i, row := range rows[:500] {
			x := make([]int32, len(row))
			for j, v := range row {
				x[j] = inputs[j].Quantize(v)
			}
			// The final z from the last hidden layer's outputs, as eval computes it.
			y, hidden := ir.EvalTrace(x)
			acc := int64(l.B[0])
			for c, w := range l.W[0] {
				acc += int64(w) * hidden[len(hidden)-1][c]
			}
			zz := min(max(Requant(acc, l.Mult[0], l.Shift[0]), -l.ZMax()-1), l.ZMax())
			if y != l.Lookup(l.OutTable, zz) || ir.Call(x, nil) != l.Lookup(ir.Fold, zz) || ir.Eval(x) != y {
				t.Fatalf("%+v row %d: Eval %d, Call %d, want y %d and m %d", opt, i, ir.Eval(x), ir.Call(x, nil), y, l.Lookup(ir.Fold, zz))
			}
		}
	}
	lin := &MLPIR{Layers: []MLPLayer{{Final: true, Act: ActIdentity}}}
	if lin.FoldRLCC() || lin.ReturnsMultiplier() {
		t.Fatal("a final identity layer folded")
	}
}
