package golden

import (
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// Every trained RL-CC model nicc ships passes the sanity probe: it cuts where o is far above
// target and raises where o is at its idle minimum, whatever the previous state (an LSTM run
// as a constant sequence). The untrained LSTM fixtures (torch's initialisation) and
// rlcc_adpg fed its inputs in the wrong order fail it, with one line naming the row.
func TestSanityProbe(t *testing.T) {
	t.Parallel()
	p := nicsdk.DefaultParams()
	for _, c := range []struct {
		file   string
		inputs []string
	}{
		{"rlcc_adpg.json", nil}, {"rlcc_adpg.onnx", nil}, {"rlcc_teacher.json", nil}, {"rlcc_teacher.onnx", nil},
		{"rlcc_xgb.json", nil}, {"rlcc_xgb_seed2.json", nil}, {"rlcc_adpg_lstm.json", nil}, {"rlcc_adpg_lstm.onnx", nil},
		{"rlcc_teacher_unnamed.onnx", rlcc.Names}, {"rlcc_authors.onnx", rlcc.AuthorsNames(rlcc.AuthorsFeatures, rlcc.AuthorsHistory)},
	} {
		lp, err := LoadPolicy("../testdata/models/"+c.file, nil, c.inputs, artifact.HandlerAuto, "")
		if err != nil {
			t.Fatal(err)
		}
		m := lp.Model
		if res := probe(m, p, nicsdk.DefaultLayout); len(res.Bad) != 0 || res.Rows != 12 {
			t.Errorf("%s: %d of %d probe rows fail: %+v", c.file, len(res.Bad), res.Rows, res.Bad)
		}
		if w := ProbeWarnings(m, p); w != nil {
			t.Errorf("%s: %q", c.file, w)
		}
	}
	for _, c := range []struct{ file, want string }{
		{testutil.WrongOrderModel(t, "../testdata/models/rlcc_adpg.json"), `model "rlcc_adpg_wrong_order" raises the rate where congestion arrives (x = a_prev 0.9, o 7.68, a_prev2 0.9, o_prev -0.768 gives multiplier 1.08`},
		{"../testdata/models/rlcc_lstm.onnx", `model "rlcc_lstm" raises the rate where congested (x = a_prev 0.9, o 7.68, a_prev2 0.9, o_prev 7.68 gives multiplier 1.01`},
	} {
		m, _, err := LoadModelAs(c.file, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := ProbeWarnings(m, p)
		if len(w) != 1 || !strings.Contains(w[0], c.want) || strings.Contains(w[0], "\n") {
			t.Errorf("%s: %q, want one line with %q", c.file, w, c.want)
		}
	}
}

// The probe's rows: o far above target cuts and o at the idle minimum raises, each with the
// previous state the same and the opposite, at every probe action; 10·T within the handler's
// clamp under a large target and scale.
func TestProbeRows(t *testing.T) {
	p := nicsdk.DefaultParams()
	rows := rlcc.ProbeRows(p, nicsdk.DefaultLayout)
	if len(rows) != 4*len(rlcc.ProbeActions) {
		t.Fatalf("%d rows", len(rows))
	}
	tt := rlcc.SamplerFor(p).T()
	for _, r := range rows {
		if r.Cut != (r.X[1] > 0) || (r.X[1] != 10*tt && r.X[1] != -tt) || r.X[0] != r.X[2] {
			t.Errorf("row %+v", r)
		}
		if r.Passes(1) || r.Passes(1+rlcc.HoldBand/2) || r.Passes(0.9) == !r.Cut || r.Passes(1.1) == r.Cut {
			t.Errorf("row %+v: Passes", r)
		}
	}
	big, err := NewParams([]float64{16, 1.5, 256})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rlcc.ProbeRows(big, nicsdk.DefaultLayout) {
		if r.X[1] > float64(nicsdk.OMax)/nicsdk.Q16One {
			t.Errorf("o %v beyond the handler's clamp", r.X[1])
		}
	}
}

// The probe runs any layout's window: the RL-CC teacher widened to three states (a synthetic
// network: its first layer reads a_{t-3} and o_{t-2} too) is probed on 6-wide windows, cuts
// in every congested one and raises in every idle one; where it disagrees (the older states
// weigh as much as the newest), the warning names every slot with its value.
func TestProbeLayout(t *testing.T) {
	l := nicsdk.Layout{History: 3, Features: 1<<nicsdk.FeatAction | 1<<nicsdk.FeatObs}
	p := nicsdk.DefaultParams()
	rows := rlcc.ProbeRows(p, l)
	for _, r := range rows {
		if len(r.X) != 6 || r.X[0] != r.X[2] || r.X[2] != r.X[4] || r.X[3] != r.X[5] {
			t.Errorf("row %+v: want the window's older states alike", r)
		}
	}
	lp, err := LoadPolicy(testutil.TeacherWide(t, "../testdata/models/rlcc_teacher.json"), nil, rlcc.LayoutNames(l), artifact.HandlerAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	res := probe(lp.Model, p, l)
	for _, b := range res.Bad {
		if b.What == "congested" || b.What == "idle" {
			t.Errorf("history 3 fails a window of one situation: %+v", b)
		}
	}
	w := ProbeWarnings(lp.Model, p)
	if res.Rows != len(rows) || len(res.Bad) > 0 && (len(w) != 1 || !strings.Contains(w[0], "a_prev3 0.9, o_prev2 ")) {
		t.Errorf("history 3: %d rows, %d fail, warnings %q", res.Rows, len(res.Bad), w)
	}
}
