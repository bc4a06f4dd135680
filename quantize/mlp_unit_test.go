package quantize

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// unitNets are the networks the unit output tests quantize: the shipped RL-CC teacher and a
// random one of its shape.
func unitNets(t *testing.T) map[string]*model.Model {
	t.Helper()
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*model.Model{"teacher": m, "random": modeltest.MLP("random", rlcc.Names, []int{4, 12, 12, 1}, 2)}
}

// unitOpts is the packed open configuration, with unit output weights if unit.
func unitOpts(unit bool) MLPOptions {
	return MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: true, UnitOutput: unit}
}

// TestUnitOutputSameFunction: unitOutput's network computes the float network's output on
// RL-CC states (to float rounding), its final weights are the signs of the original ones, and
// the original is left as it was.
func TestUnitOutputSameFunction(t *testing.T) {
	for path, m := range unitNets(t) {
		before := m.Layers[1].W[0][0]
		u, err := unitOutput(m, unitOpts(true))
		if err != nil {
			t.Fatal(err)
		}
		if m.Layers[1].W[0][0] != before {
			t.Fatalf("%s: unitOutput changed the original network", path)
		}
		last := len(m.Layers) - 1
		for j, w := range m.Layers[last].W[0] {
			if want := math.Copysign(1, w); w == 0 && u.Layers[last].W[0][j] != 0 || w != 0 && u.Layers[last].W[0][j] != want {
				t.Errorf("%s: final weight %d is %g for %g", path, j, u.Layers[last].W[0][j], w)
			}
		}
		rows, err := testutil.RLCCRows(2000, 3)
		if err != nil {
			t.Fatal(err)
		}
		sm, su := m.NewState(), u.NewState()
		for _, row := range rows {
			a, b := m.Eval(sm, row)[0], u.Eval(su, row)[0]
			if math.Abs(a-b) > 1e-12 {
				t.Fatalf("%s at %v: %g, unit output weights %g", path, row, a, b)
			}
		}
	}
}

// TestUnitOutputLayers: under UnitOutput the final layer's weights are ±1 or 0 and its
// requantization a shift (Mult 1) that takes the shared scale of the relu layer before it
// exactly to the final grid's step; that layer's scale is the finest its proofs allow (some
// channel shifts by 1 bit). The packed pairs still equal the golden model, and on the teacher
// and a random network the fidelity is at least as good as without unit weights.
func TestUnitOutputLayers(t *testing.T) {
	inputs := GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
	rows, err := testutil.RLCCRows(5000, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for path, m := range unitNets(t) {
		plain, err := MLP(m, inputs, rows, unitOpts(false))
		if err != nil {
			t.Fatal(err)
		}
		ir, err := MLP(m, inputs, rows, unitOpts(true))
		if err != nil {
			t.Fatal(err)
		}
		f, h := &ir.Layers[len(ir.Layers)-1], &ir.Layers[len(ir.Layers)-2]
		for i, w := range f.W[0] {
			if w < -1 || w > 1 {
				t.Errorf("%s: final weight %d is %d", path, i, w)
			}
		}
		if f.Mult[0] != 1 || math.Ldexp(f.WScale[0], f.Shift[0]) != f.OutScale {
			t.Errorf("%s: final requantization *%d >>%d from scale %g to %g", path, f.Mult[0], f.Shift[0], f.WScale[0], f.OutScale)
		}
		shift1 := false
		for j := range h.Out {
			if h.ZScale[j] != f.WScale[0] {
				t.Errorf("%s: channel %d of the relu layer has scale %g, the final layer reads %g", path, j, h.ZScale[j], f.WScale[0])
			}
			shift1 = shift1 || h.Shift[j] == 1
		}
		if !shift1 {
			t.Errorf("%s: no channel before the final layer shifts by 1: its scale %g is not the finest (shifts %v)", path, f.WScale[0], h.Shift)
		}
		checkGroups(t, path, h, 500, r)
		p, u := plain.Fidelity, ir.Fidelity
		t.Logf("%s: max |dy| %.5f -> %.5f, flips %.3f%% -> %.3f%% with unit output weights (final shift %d)", path, p.MaxAbs, u.MaxAbs, 100*p.Flips, 100*u.Flips, f.Shift[0])
		if u.MaxAbs > p.MaxAbs || u.Flips > p.Flips {
			t.Errorf("%s: unit output weights lose fidelity", path)
		}
	}
}

// TestUnitOutputZeroWeight: a zero final weight leaves its channel's final weight 0, so the
// channel is never computed, and quantizing still works.
func TestUnitOutputZeroWeight(t *testing.T) {
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	last := len(m.Layers) - 1
	m.Layers[last].W[0][3] = 0
	rows, err := testutil.RLCCRows(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := MLP(m, GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout)), rows, unitOpts(true))
	if err != nil {
		t.Fatal(err)
	}
	if w := ir.Layers[last].W[0][3]; w != 0 {
		t.Errorf("final weight 3 is %d, want 0", w)
	}
}

// TestUnitOutputRefusals: unit output weights need packed lanes and a relu layer before the
// final one.
func TestUnitOutputRefusals(t *testing.T) {
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := testutil.RLCCRows(500, 1)
	if err != nil {
		t.Fatal(err)
	}
	inputs := GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
	if _, err := MLP(m, inputs, rows, MLPOptions{WeightBits: 16, UnitOutput: true}); err == nil || !strings.Contains(err.Error(), "need packed lanes") {
		t.Errorf("without Packed: %v", err)
	}
	m.Layers[len(m.Layers)-2].Act = model.ActTanh
	if _, err := MLP(m, inputs, rows, unitOpts(true)); err == nil || !strings.Contains(err.Error(), "need a relu layer") {
		t.Errorf("tanh before the final layer: %v", err)
	}
}
