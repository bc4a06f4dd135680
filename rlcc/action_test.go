package rlcc

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
		if m := HandlerMultiplier(c.y); math.Abs(m-c.m) > 1e-12 {
			t.Errorf("HandlerMultiplier(%v) = %v, want %v", c.y, m, c.m)
		}
		if d := DirectionOf(c.y); d != c.want {
			t.Errorf("DirectionOf(%v) = %v, want %v", c.y, d, c.want)
		}
	}
	if m := HandlerMultiplier(3); m != 1.2 {
		t.Errorf("HandlerMultiplier(3) = %v, want 1.2 (y clamped to 1)", m)
	}
	if m := HandlerMultiplier(-3); m != 1/1.2 {
		t.Errorf("HandlerMultiplier(-3) = %v, want 1/1.2 (y clamped to -1)", m)
	}
}

// OutputOf inverts Multiplier on the handler's y range, both branches and the kink at 1.
func TestOutputOfInvertsMultiplier(t *testing.T) {
	for _, c := range []struct{ m, y float64 }{{1.2, 1}, {1, 0}, {1.1, 0.5}, {1 / 1.2, -1}, {1 / 1.1, -0.5}} {
		if got := OutputOf(c.m); math.Abs(got-c.y) > 1e-12 {
			t.Errorf("OutputOf(%v) = %v, want %v", c.m, got, c.y)
		}
	}
	for y := -1.0; y <= 1; y += 1.0 / 64 {
		if got := OutputOf(Multiplier(y)); math.Abs(got-y) > 1e-12 {
			t.Errorf("OutputOf(Multiplier(%v)) = %v", y, got)
		}
	}
}
