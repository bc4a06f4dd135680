package verify

import (
	"reflect"
	"slices"
	"testing"

	"github.com/nicc-dev/nicc/budget"
)

// ThinMeasured leaves up to measureCap calls as they are; beyond, it keeps the longest and
// every other one of the rest, by cycles.
func TestThinMeasured(t *testing.T) {
	cand := make([]Measured, measureCap)
	for i := range cand {
		cand[i] = Measured{Cycles: uint64(i * 7919 % 1000), Vector: budget.Vector{Line: i}}
	}
	if got := ThinMeasured(slices.Clone(cand)); !reflect.DeepEqual(got, cand) {
		t.Error("measureCap calls changed")
	}
	cand = append(cand, Measured{Cycles: 5000, Vector: budget.Vector{Line: -1}})
	sorted := slices.Clone(cand)
	slices.SortStableFunc(sorted, byCycles)
	got := ThinMeasured(cand)
	if len(got) != longestN+(len(sorted)-longestN+1)/2 || got[0].Vector.Line != -1 {
		t.Fatalf("%d calls kept, first %+v", len(got), got[0])
	}
	for i, m := range got {
		j := i
		if i >= longestN {
			j = longestN + 2*(i-longestN)
		}
		if !reflect.DeepEqual(m, sorted[j]) {
			t.Fatalf("kept %d is %+v, want %+v", i, m, sorted[j])
		}
	}
}
