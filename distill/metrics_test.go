package distill

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

func TestCompare(t *testing.T) {
	teacher := []float64{0, 0.5, -0.5, 0.01}
	pred := []float64{0, 0.5, 0.1, 0.01}
	f := Compare(pred, teacher)
	if f.Rows != 4 || math.Abs(f.RMSE-0.3) > 1e-12 || math.Abs(f.MaxAbs-0.6) > 1e-12 || f.Disagree != 0.25 {
		t.Errorf("%+v", f)
	}
	st := stump(rlcc.Names, -0.5, 0.25)
	d, _ := DefaultRLCC.Sample(1000, 1)
	if err := Label(st, d); err != nil {
		t.Fatal(err)
	}
	if f := Measure(st, d); f.RMSE != 0 || f.MaxAbs != 0 || f.Disagree != 0 || f.Rows != 1000 {
		t.Errorf("teacher against itself: %+v", f)
	}
	if f := Measure(stump(rlcc.Names, 0, 0.25), d); f.Disagree == 0 || f.MaxAbs != 0.5 {
		t.Errorf("a student holding where the teacher decreases: %+v", f)
	}
}

// Predict gives each row's model.Eval bits: for a student distill trained (the branch-free
// walk), one whose thresholds are ±0 with states at ±0 (and a tree that is a leaf), and
// models it must evaluate row by row (a < split, a sigmoid, a NaN state).
func TestPredictIsEval(t *testing.T) {
	d, _ := DefaultRLCC.Sample(50_000, 7)
	if err := Label(stump(rlcc.Names, -0.5, 0.25), d); err != nil {
		t.Fatal(err)
	}
	trained, _, err := Train(d, nil, Options{Trees: 6, Depth: 4})
	if err != nil {
		t.Fatal(err)
	}
	zeros := &model.Model{Version: model.NativeVersion, Inputs: rlcc.Names, Ensemble: &model.Ensemble{Base: 0.5, Trees: []model.Tree{
		{Nodes: []model.Node{{Feature: 1, Threshold: math.Copysign(0, -1), Cmp: model.CmpLE, Left: 1, Right: 2}, {Leaf: true, Value: -1}, {Leaf: true, Value: 1}}},
		{Nodes: []model.Node{{Feature: 3, Threshold: 0, Cmp: model.CmpLE, Missing: model.MissingNone, Left: 1, Right: 2}, {Leaf: true, Value: 0.125}, {Leaf: true, Value: 3}}},
		{Nodes: []model.Node{{Leaf: true, Value: 0.0625}}}, // depth 0
	}}}
	sigmoid := stump(rlcc.Names, -0.5, 0.25)
	sigmoid.Ensemble.Transform = model.TransformSigmoid
	for r := range 1000 { // states at ±0 and at the thresholds
		d.X[1][r], d.X[3][r] = []float64{0, math.Copysign(0, -1), 1}[r%3], []float64{math.Copysign(0, -1), 0}[r%2]
	}
	nan := &Dataset{Names: d.Names, X: [][]float64{{0.5, 1}, {math.NaN(), 3}, {1, 1}, {0, 2}}, Y: []float64{0, 0}}
	for name, c := range map[string]struct {
		m    *model.Model
		d    *Dataset
		flat bool
	}{
		"trained": {trained, d, true}, "zero thresholds": {zeros, d, true},
		"< split": {stump(rlcc.Names, -0.5, 0.25), d, false}, "sigmoid": {sigmoid, d, false},
		"NaN state": {trained, nan, true},
		"no trees":  {&model.Model{Version: model.NativeVersion, Inputs: rlcc.Names, Ensemble: &model.Ensemble{Base: 0.375}}, d, true},
	} {
		if got := flatEvaluable(c.m.Ensemble, len(c.d.X)); got != c.flat {
			t.Errorf("%s: flatEvaluable %v, want %v", name, got, c.flat)
		}
		pred := Predict(c.m, c.d)
		x := make([]float64, len(c.d.X))
		for r := range c.d.Rows() {
			for i, col := range c.d.X {
				x[i] = col[r]
			}
			if want := c.m.Eval(nil, x)[0]; math.Float64bits(pred[r]) != math.Float64bits(want) {
				t.Fatalf("%s: row %d %v: Predict %v, Eval %v", name, r, x, pred[r], want)
			}
		}
	}
	if flatEvaluable(trained.Ensemble, 3) { // trained splits on all 4 features
		t.Error("flatEvaluable on 3 features: a model of 4")
	}
}
