package lab

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/diff"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/plot"
	"github.com/nicc-dev/nicc/rlcc"
)

func TestBudgetCycles(t *testing.T) {
	b := &budget.Report{BudgetMicros: 2, Core: budget.CoreInfo{ClockHz: 1.8e9, ThreadsSharing: 1}}
	if c := budgetCycles(b); c != 3600 {
		t.Errorf("2 µs at 1.8 GHz: %v cycles, want 3600", c)
	}
	b.Core.ThreadsSharing = 4
	if c := budgetCycles(b); c != 900 {
		t.Errorf("4 threads: %v cycles, want 900", c)
	}
}

// maxDiff is the largest |Δy| of h's grids.
func maxDiff(h plot.Heatmaps) float64 {
	m := 0.0
	for _, row := range h.Rows {
		for _, z := range row.Diff.Z {
			for _, v := range z {
				m = max(m, math.Abs(v))
			}
		}
	}
	return m
}

func TestHeatmapsCompareWhatTheStudentSees(t *testing.T) {
	// An integer student sees a_{t-1} clamped to 0.8333; Δy compares the teacher there too.
	teacher := func(x []float64) float64 { return x[0] }
	clamped := func(x []float64) []float64 { return []float64{max(x[0], 0.8333), x[1], x[2], x[3]} }
	student := func(x []float64) float64 { return teacher(clamped(x)) }
	r := &diff.DiffReport{Teacher: "t.json", TeacherKind: "mlp",
		Figures: diff.Figures{RLCC: true, Teacher: teacher, Student: student, Sampler: rlcc.DefaultSampler, Headline: "test student"}}
	if d := maxDiff(heatmaps(r)); math.Abs(d-0.0333) > 1e-9 {
		t.Errorf("float student: max diff %v, want 0.0333", d)
	}
	r.Figures.Repr = clamped
	if d := maxDiff(heatmaps(r)); d != 0 {
		t.Errorf("integer student: max diff %v, want 0", d)
	}
	// The grid's y axis is o_t in units of T: the teacher sees o_t = y·T.
	var seen []float64
	g := evalGrid(func(x []float64) float64 { seen = append(seen, x[1]); return 0 }, rlcc.HeatStates(rlcc.DefaultSampler)[0], nicsdk.DefaultLayout)
	if g.Ys[0] != -1 || g.Ys[rlcc.HeatRows-1] != 100 || seen[0] != -rlcc.DefaultSampler.T() || math.Abs(seen[len(seen)-1]-100*rlcc.DefaultSampler.T()) > 1e-12 {
		t.Errorf("grid o_t/T %v..%v, teacher saw %v..%v", g.Ys[0], g.Ys[rlcc.HeatRows-1], seen[0], seen[len(seen)-1])
	}
}

// lab.Diff draws nicc diff's four figures into --out, with the LSTM heatmaps' note for an
// integer LSTM student, and nothing without --out.
func TestDiffPlots(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		teacher string
		note    int
	}{{teacherJSON, 0}, {"../testdata/models/rlcc_lstm.onnx", 1}} {
		out := t.TempDir()
		r, err := Diff(diff.DiffOptions{Teacher: c.teacher, Samples: 500, Seed: 1, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Plots) != 4 {
			t.Fatalf("%s: plots %v, want 4", c.teacher, r.Plots)
		}
		for _, f := range r.Plots {
			b, err := os.ReadFile(f)
			if err != nil || len(b) < 1000 || filepath.Dir(f) != out {
				t.Errorf("%s: %d bytes, %v", f, len(b), err)
			}
			if strings.HasSuffix(f, ".png") && string(b[1:4]) != "PNG" || strings.HasSuffix(f, ".svg") && !strings.Contains(string(b[:200]), "<svg") {
				t.Errorf("%s: not the format its name says", f)
			}
		}
		if n := strings.Count(strings.Join(r.Notes, "\n"), "heatmaps: each cell is one step from the zero recurrent state"); n != c.note {
			t.Errorf("%s: %d heatmap notes, want %d: %q", c.teacher, n, c.note, r.Notes)
		}
		r, err = Diff(diff.DiffOptions{Teacher: c.teacher, Samples: 100, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Plots) != 0 || strings.Contains(strings.Join(r.Notes, "\n"), "heatmaps") {
			t.Errorf("%s without --out: plots %v, notes %q", c.teacher, r.Plots, r.Notes)
		}
	}
}
