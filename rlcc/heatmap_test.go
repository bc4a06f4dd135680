package rlcc

import (
	"reflect"
	"testing"
)

func TestHeatStates(t *testing.T) {
	hs := HeatStates(DefaultSampler)
	T := DefaultSampler.T()
	if len(hs) != 3 || hs[0].OPrev != 0 || hs[1].OPrev != -T || hs[2].OPrev != 50*T || hs[2].APrev2 != 1 {
		t.Fatalf("states %+v", hs)
	}
	as, ts := hs[2].Axes()
	if len(as) != HeatCols || as[0] != 0.8 || as[HeatCols-1] != 1.2 || len(ts) != HeatRows || ts[0] != -1 || ts[HeatRows-1] != 100 {
		t.Errorf("axes a %v..%v (%d), o/T %v..%v (%d)", as[0], as[len(as)-1], len(as), ts[0], ts[len(ts)-1], len(ts))
	}
	if x, want := hs[2].Input(1.1, 2), []float64{1.1, 2 * T, 1, 50 * T}; !reflect.DeepEqual(x, want) {
		t.Errorf("Input(1.1, 2) = %v, want %v", x, want)
	}
}
