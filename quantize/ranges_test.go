package quantize_test

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/quantize"
)

func TestPadRangeAndRowRanges(t *testing.T) {
	for _, c := range []struct{ lo, hi, wantLo, wantHi float64 }{
		{0, 64, -1, 65}, // 1/64 of the span
		{1000, 1001, 999.0224609375, 1001.9775390625}, // 1/1024 of the magnitude beats 1/64 of a small span
		{0, 0, -1, 1}, // nothing to scale by
	} {
		lo, hi := quantize.PadRange(c.lo, c.hi)
		if math.Abs(lo-c.wantLo) > 1e-9 || math.Abs(hi-c.wantHi) > 1e-9 {
			t.Errorf("PadRange(%v, %v) = %v, %v; want %v, %v", c.lo, c.hi, lo, hi, c.wantLo, c.wantHi)
		}
	}
	lo, hi := quantize.RowRanges(2, [][]float64{{0, math.NaN()}}, [][]float64{{64, math.NaN()}})
	if lo[0] != -1 || hi[0] != 65 || lo[1] != -1-2.0/64 || hi[1] != 1+2.0/64 {
		t.Errorf("RowRanges: %v %v; want [-1 %v] [65 %v] (a column of NaN is [-1, 1], padded)", lo, hi, -1-2.0/64, 1+2.0/64)
	}
}

// A threshold beyond every fixed-point value (CatBoost's -FLT_MAX border under nan_mode Min)
// (or +FLT_MAX under Max) stays out of TreeRanges and folds in CheckResolution and
// CheckClampedSplits; one at 2^63, which Q-32 reaches, does neither.
func TestBeyondFixedPoint(t *testing.T) {
	split := func(th float64) *model.Model {
		return &model.Model{Version: model.NativeVersion, Inputs: []string{"x"}, Ensemble: &model.Ensemble{
			Float32Splits: true, Trees: []model.Tree{{Nodes: []model.Node{
				{Feature: 0, Threshold: th, Cmp: model.CmpGT, Left: 1, Right: 2},
				{Leaf: true, Value: 1}, {Leaf: true, Value: 2}}}, {Nodes: []model.Node{
				{Feature: 0, Threshold: 0.5, Cmp: model.CmpGT, Left: 1, Right: 2},
				{Leaf: true, Value: 3}, {Leaf: true, Value: 4}}}}}}
	}
	flt := -float64(math.MaxFloat32)
	m := split(flt)
	lo, hi, _ := quantize.TreeRanges(m, nil)
	if lo[0] < -1 || hi[0] > 2 {
		t.Fatalf("range [%v, %v] takes in the -FLT_MAX border", lo[0], hi[0])
	}
	ins, err := quantize.ChooseInputs(m.Inputs, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if err := quantize.CheckResolution(m, ins); err != nil {
		t.Errorf("-FLT_MAX border: %v", err)
	}
	if !quantize.BeyondFixedPoint(flt) || !quantize.BeyondFixedPoint(-flt) || quantize.BeyondFixedPoint(-math.Ldexp(1, 63)) {
		t.Error("BeyondFixedPoint: want true for ±FLT_MAX, false for -2^63")
	}
	if err := quantize.CheckResolution(split(-math.Ldexp(1, 63)), ins); err == nil {
		t.Error("a split at -2^63 outside the range was not refused")
	}
	clamped := []bool{true}
	if err := quantize.CheckClampedSplits(split(-flt), ins, clamped); err != nil {
		t.Errorf("+FLT_MAX border on a clamped input: %v", err)
	}
	if err := quantize.CheckClampedSplits(split(1e6), ins, clamped); err == nil {
		t.Error("a split above a clamped input's top was not refused")
	}
}
