package rlcc

import (
	"math"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

func TestObservation(t *testing.T) {
	p := nicsdk.DefaultParams()
	target, beta, scale := Real(p)
	if beta != 1.5 || scale != 12 || math.Abs(target-0.064) > 1e-4 {
		t.Fatalf("Real = %v, %v, %v", target, beta, scale)
	}
	if o := Observation(5000, 0, nicsdk.LineRate, p); o != -target*scale {
		t.Errorf("no base: o %v, want %v", o, -target*scale)
	}
	// rtt/base = 2.5: (2.5 − 1.5)·1 − target, times scale, at line rate.
	if o, want := Observation(25000, 10000, nicsdk.LineRate, p), (1-target)*scale; math.Abs(o-want) > 1e-12 {
		t.Errorf("inflation 2.5: o %v, want %v", o, want)
	}
	// The Q16 twin agrees to within its two floor roundings.
	rate := uint32(nicsdk.LineRate / 4)
	q := nicsdk.Observation(nicsdk.RTTInflation(40000, 10000), nicsdk.SqrtRate(rate), p)
	if o := Observation(40000, 10000, rate, p); math.Abs(o-float64(q)/nicsdk.Q16One) > 2*scale/nicsdk.Q16One {
		t.Errorf("rate 1/4, inflation 4: o %v, Q16 twin %v", o, float64(q)/nicsdk.Q16One)
	}
	for _, o := range []float64{-0.5, 0, 3, 70} {
		rtt := RTTFor(o, rate, 10000, p)
		if got := Observation(rtt, 10000, rate, p); math.Abs(got-o) > 1e-2 {
			t.Errorf("RTTFor(%v) = %d, whose o is %v", o, rtt, got)
		}
	}
	if rtt := RTTFor(1e9, nicsdk.LineRate, 1<<30, p); rtt != math.MaxUint32 {
		t.Errorf("RTTFor beyond uint32: %d", rtt)
	}
}
