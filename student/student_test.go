package student

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

const teacherJSON = "../testdata/models/rlcc_teacher.json"

func smallDistill() DistillOptions {
	return DistillOptions{Teacher: teacherJSON, Samples: 4000, HeldOut: 0.25, Seed: 3,
		Train: distill.Options{Trees: 4, Depth: 3, LearningRate: 1, L2: 1}}
}

func TestDistill(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "student.json")
	r, err := Distill(smallDistill(), out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Grid != "rlcc" || r.Samples != 4000 || r.Train.Rows != 3000 || r.HeldOut.Rows != 1000 || r.Student != out {
		t.Errorf("report %+v", r)
	}
	if !(r.HeldOut.RMSE > 0 && r.HeldOut.RMSE < 0.3) || r.HeldOut.MaxAbs < r.HeldOut.RMSE || r.HeldOut.Disagree > 0.3 {
		t.Errorf("held-out fit %+v", r.HeldOut)
	}
	m, err := model.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Ensemble.Trees) > 4 || !reflect.DeepEqual(m.Inputs, rlcc.Names) {
		t.Errorf("student: %d trees, inputs %v", len(m.Ensemble.Trees), m.Inputs)
	}
	// Every threshold lies between two points of the RL-CC Q16 grid: no grid point changes
	// branch when the split is quantized.
	grid := quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
	for ti, tr := range m.Ensemble.Trees {
		for ni := range tr.Nodes {
			n := &tr.Nodes[ni]
			if n.Leaf {
				continue
			}
			in := grid[n.Feature]
			s, err := quantize.Split(n, in, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range []int32{s.T - 1, s.T, s.T + 1, s.T + 2} {
				if raw < in.Min || raw > in.Max {
					continue
				}
				if float := n.GoesLeft(in.Value(raw), false); float != (raw <= s.T) {
					t.Errorf("tree %d node %d: %s raw %d: float split goes left %v, integer %v", ti, ni, in.Name, raw, float, raw <= s.T)
				}
			}
		}
	}
	again, err := Distill(smallDistill(), "")
	if err != nil || !reflect.DeepEqual(again.Model, r.Model) {
		t.Errorf("not deterministic (%v)", err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "held-out   RMSE ") || !strings.Contains(b.String(), "direction disagreement") {
		t.Errorf("text:\n%s", b.String())
	}
	if _, err := json.Marshal(r); err != nil {
		t.Error(err)
	}
}

// A states CSV whose header names the teacher's inputs in another order is read by name.
func TestDistillStatesByName(t *testing.T) {
	d, _ := distill.DefaultRLCC.Sample(500, 9)
	var inOrder, swapped strings.Builder
	inOrder.WriteString("a_prev,o,a_prev2,o_prev\n")
	swapped.WriteString("o_prev,a_prev2,o,a_prev\n")
	for r := range 500 {
		fmt.Fprintf(&inOrder, "%v,%v,%v,%v\n", d.X[0][r], d.X[1][r], d.X[2][r], d.X[3][r])
		fmt.Fprintf(&swapped, "%v,%v,%v,%v\n", d.X[3][r], d.X[2][r], d.X[1][r], d.X[0][r])
	}
	dir := t.TempDir()
	var models []*model.Model
	for name, text := range map[string]string{"a.csv": inOrder.String(), "b.csv": swapped.String()} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		o := smallDistill()
		o.States, o.Samples = p, 0
		r, err := Distill(o, "")
		if err != nil {
			t.Fatal(err)
		}
		r.Model.Doc = ""
		models = append(models, r.Model)
	}
	if !reflect.DeepEqual(models[0], models[1]) {
		t.Error("the same states with columns in another order give another student")
	}
}

func TestDistillBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nan := &model.Model{Version: model.NativeVersion, Name: "nan", Inputs: rlcc.Names, Layers: []model.Layer{
		{Op: model.OpDense, In: 4, Out: 2, W: [][]float64{{0, 1e308, 0, 0}, {0, 1e308, 0, 0}}, Act: model.ActReLU},
		{Op: model.OpDense, In: 2, Out: 1, W: [][]float64{{1, -1}}, Act: model.ActTanh},
	}}
	nanFile := filepath.Join(dir, "nan.json")
	if err := model.Save(nanFile, nan); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*DistillOptions)
		want string
	}{
		{"trees 0", func(o *DistillOptions) { o.Train.Trees = 0 }, "trees 0: want 1 to"},
		{"depth 0", func(o *DistillOptions) { o.Train.Depth = 0 }, "depth 0: want 1 to"},
		{"held-out 1", func(o *DistillOptions) { o.HeldOut = 1 }, "held-out fraction 1"},
		{"width", func(o *DistillOptions) { o.States = write("three.csv", "1,2,3\n4,5,6\n") }, "three.csv gives states of 3 values"},
		{"empty csv", func(o *DistillOptions) { o.States = write("empty.csv", "") }, "empty.csv: no data rows"},
		{"malformed csv", func(o *DistillOptions) { o.States = write("bad.csv", "1,2,3,4\n1,2,x,4\n") }, `bad.csv: line 2: column 3: "x" is not a number`},
		{"nan", func(o *DistillOptions) { o.Teacher = nanFile }, "outputs NaN at state "},
		{"grid", func(o *DistillOptions) { o.GridName = "q8" }, `unknown grid "q8"`},
		{"missing", func(o *DistillOptions) { o.Teacher = filepath.Join(dir, "none.json") }, "none.json"},
	} {
		o := smallDistill()
		c.edit(&o)
		if _, err := Distill(o, ""); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestDistillHeldOutStates: with a held-out file, every training state is trained on and the
// student is measured on exactly the file's states.
func TestDistillHeldOutStates(t *testing.T) {
	d, _ := distill.DefaultRLCC.Sample(300, 4)
	write := func(name string, from, to int) string {
		var b strings.Builder
		b.WriteString("a_prev,o,a_prev2,o_prev\n")
		for r := from; r < to; r++ {
			fmt.Fprintf(&b, "%v,%v,%v,%v\n", d.X[0][r], d.X[1][r], d.X[2][r], d.X[3][r])
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := smallDistill()
	o.States, o.Samples, o.HeldOutStates = write("train.csv", 0, 200), 0, write("test.csv", 200, 300)
	r, err := Distill(o, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Train.Rows != 200 || r.HeldOut.Rows != 100 {
		t.Errorf("trained on %d and measured on %d states, want 200 and 100", r.Train.Rows, r.HeldOut.Rows)
	}
	o.HeldOutStates = write("narrow.csv", 0, 0)
	if _, err := Distill(o, ""); err == nil {
		t.Error("an empty held-out file was accepted")
	}
}

// The default training refits the leaves, and the report says so: the held-out RMSE it gives
// for boosting alone is what the same boosting gives with the refit off.
func TestDistillRefitReport(t *testing.T) {
	o := smallDistill()
	o.Train = DefaultTrain
	o.Train.Trees, o.Train.Depth = 4, 3
	r, err := Distill(o, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Refit != RefitKept || !(r.BoostHeldOutRMSE > r.HeldOut.RMSE) || r.LearningRate != 0.5 {
		t.Errorf("refit %q, held-out RMSE %v after it and %v before, learning rate %v", r.Refit, r.HeldOut.RMSE, r.BoostHeldOutRMSE, r.LearningRate)
	}
	var txt strings.Builder
	if err := r.WriteText(&txt); err != nil || !strings.Contains(txt.String(), fmt.Sprintf("refit      kept: all leaves refit jointly, held-out RMSE %.6f with boosting's leaves", r.BoostHeldOutRMSE)) ||
		!strings.Contains(r.Model.Doc, "learning rate 0.5, L2 1, refit kept.") {
		t.Errorf("text (%v):\n%s\ndoc %q", err, txt.String(), r.Model.Doc)
	}
	o.Train.Refit = false
	plain, err := Distill(o, "")
	if err != nil {
		t.Fatal(err)
	}
	if plain.Refit != RefitOff || plain.BoostHeldOutRMSE != 0 || plain.HeldOut.RMSE != r.BoostHeldOutRMSE {
		t.Errorf("refit off: %q, held-out RMSE %v (with the refit: %v before it)", plain.Refit, plain.HeldOut.RMSE, r.BoostHeldOutRMSE)
	}
}
