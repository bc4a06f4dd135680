package distill

import (
	"math"
	"testing"

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
