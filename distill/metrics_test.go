package distill

import (
	"math"
	"testing"
)

func TestMultiplierAndDirection(t *testing.T) {
	for _, c := range []struct {
		y    float64
		m    float64
		want Direction
	}{
		{0, 1, Hold},
		{1, 1.2, Increase},
		{-1, 1 / 1.2, Decrease},
		{0.5, 1.1, Increase},
		{0.025, 1.005, Hold}, // exactly +0.5%: hold
		{0.026, 1.0052, Increase},
		{-0.025, 1 / 1.005, Hold},
		{-0.03, 1 / 1.006, Decrease},
	} {
		if m := Multiplier(c.y); math.Abs(m-c.m) > 1e-12 {
			t.Errorf("Multiplier(%v) = %v, want %v", c.y, m, c.m)
		}
		if d := DirectionOf(c.y); d != c.want {
			t.Errorf("DirectionOf(%v) = %v, want %v", c.y, d, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	teacher := []float64{0, 0.5, -0.5, 0.01}
	pred := []float64{0, 0.5, 0.1, 0.01}
	f := Compare(pred, teacher)
	if f.Rows != 4 || math.Abs(f.RMSE-0.3) > 1e-12 || math.Abs(f.MaxAbs-0.6) > 1e-12 || f.Disagree != 0.25 {
		t.Errorf("%+v", f)
	}
	st := stump(RLCCNames, -0.5, 0.25)
	d, _ := DefaultRLCC.Sample(1000, 1)
	if err := Label(st, d); err != nil {
		t.Fatal(err)
	}
	if f := Measure(st, d); f.RMSE != 0 || f.MaxAbs != 0 || f.Disagree != 0 || f.Rows != 1000 {
		t.Errorf("teacher against itself: %+v", f)
	}
	if f := Measure(stump(RLCCNames, 0, 0.25), d); f.Disagree == 0 || f.MaxAbs != 0.5 {
		t.Errorf("a student holding where the teacher decreases: %+v", f)
	}
}
