package distill

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/rlcc"
)

// stump is a one-split ensemble on feature 1: x[1] < 1 gives lo, else hi.
func stump(inputs []string, lo, hi float64) *model.Model {
	return &model.Model{Version: model.NativeVersion, Name: "stump", Inputs: inputs, Ensemble: &model.Ensemble{Trees: []model.Tree{{Nodes: []model.Node{
		{Feature: 1, Threshold: 1, Cmp: model.CmpLT, Left: 1, Right: 2},
		{Leaf: true, Value: lo},
		{Leaf: true, Value: hi},
	}}}}}
}

func TestLabel(t *testing.T) {
	d, _ := DefaultRLCC.Sample(10000, 3)
	if err := Label(stump(rlcc.Names, -0.5, 0.25), d); err != nil {
		t.Fatal(err)
	}
	if d.Rows() != 10000 {
		t.Fatalf("%d labels", d.Rows())
	}
	for r, y := range d.Y {
		want := 0.25
		if d.X[1][r] < 1 {
			want = -0.5
		}
		if y != want {
			t.Fatalf("row %d: o %v labelled %v, want %v", r, d.X[1][r], y, want)
		}
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
}

func TestLabelErrors(t *testing.T) {
	d, _ := DefaultRLCC.Sample(5000, 3)
	err := Label(stump([]string{"a", "b", "c"}, 0, 0), d)
	if err == nil || !strings.Contains(err.Error(), "takes 3 inputs, the states have 4 values") {
		t.Errorf("width mismatch: %v", err)
	}
	// NaN above o = 1: the first such row is named.
	err = Label(stump(rlcc.Names, 0, math.NaN()), d)
	first := 0
	for d.X[1][first] < 1 {
		first++
	}
	if err == nil || !strings.Contains(err.Error(), "outputs NaN at state ") {
		t.Fatalf("NaN output: %v", err)
	}
	if want := fmt.Sprintf("at state %d ", first+1); !strings.Contains(err.Error(), want) {
		t.Errorf("NaN output: %v, want it to name state %d", err, first+1)
	}
	if d.Y != nil {
		t.Error("a failed Label left labels behind")
	}
}
