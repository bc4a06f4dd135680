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
