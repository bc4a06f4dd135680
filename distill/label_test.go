package distill

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
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

// Label's labels are each state's model.Eval from a fresh state, bit for bit, whichever way it
// evaluates the teacher: a dense network with biases and every activation through reused
// buffers, an ensemble, and the trained LSTM one fresh state a row.
func TestLabelIsEval(t *testing.T) {
	d, _ := DefaultRLCC.Sample(20_003, 11) // not a multiple of 4: EvalInto4 and the rows after
	dense := modeltest.MLP("dense", rlcc.Names, []int{4, 7, 5, 3, 1}, 2)
	for i, act := range []model.Activation{model.ActLeakyReLU, model.ActSigmoid, model.ActClip, model.ActTanh} {
		l := &dense.Layers[i]
		l.Act, l.Alpha, l.Lo, l.Hi, l.B = act, 0.1, -0.5, 0.75, make([]float64, l.Out)
		for j := range l.B {
			l.B[j] = 0.1 * float64(j-1)
		}
	}
	lstm, err := model.Load("../testdata/models/rlcc_adpg_lstm.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*model.Model{dense, modeltest.Trees("trees", rlcc.Names, 5, 3, 4), lstm} {
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := Label(m, d); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, len(d.X))
		for r := range d.Rows() {
			for i, col := range d.X {
				x[i] = col[r]
			}
			if want := m.Eval(m.NewState(), x)[0]; math.Float64bits(d.Y[r]) != math.Float64bits(want) {
				t.Fatalf("%s: row %d: label %v, Eval %v", m.Name, r, d.Y[r], want)
			}
		}
	}
}
