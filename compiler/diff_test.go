package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/quantize"
)

const diffTeacher = "../testdata/models/rlcc_teacher.json"

func TestDiffInt8(t *testing.T) {
	out := t.TempDir()
	r, err := Diff(DiffOptions{Teacher: diffTeacher, Samples: 2000, Seed: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	if s.Rows != 2000 {
		t.Errorf("rows %d, want 2000", s.Rows)
	}
	if !(s.MaxAbs >= s.P999 && s.P999 >= s.P99 && s.P99 >= s.P90 && s.P90 >= s.P50 && s.P50 >= 0) {
		t.Errorf("percentiles out of order: %+v", s)
	}
	if !(s.RMSE <= s.MaxAbs) || s.MaxAbs > 2.0/128 {
		t.Errorf("RMSE %v, max %v: want RMSE <= max <= 2/128", s.RMSE, s.MaxAbs)
	}
	if s.FlipRate < 0 || s.FlipRate > 0.01 || s.FlipRate != float64(s.Flips)/float64(s.Rows) {
		t.Errorf("flips %d, rate %v", s.Flips, s.FlipRate)
	}
	if len(r.Trace) != 3 {
		t.Fatalf("trace has %d layers, want 3: %+v", len(r.Trace), r.Trace)
	}
	for _, l := range r.Trace {
		if !(l.RMSE <= l.MaxAbs) || l.MaxAbs > 0.05 {
			t.Errorf("layer %d: %+v", l.Layer, l)
		}
	}
	// The last layer's trace is the output: the statistics' max and RMSE.
	if last := r.Trace[2]; last.MaxAbs != s.MaxAbs || last.Units != 1 || last.Act != "tanh" {
		t.Errorf("last layer %+v, stats max %v", last, s.MaxAbs)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "clamped") {
		t.Errorf("notes %q: want only the clamp note (no trace mismatch)", r.Notes)
	}
	// The 8-bit configuration's trace also lands on MLPIR.Eval.
	r8, err := Diff(DiffOptions{Teacher: diffTeacher, Samples: 500, Seed: 2, Quant: quantizeOpts8()})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r8.Notes {
		if strings.Contains(n, "internal error") {
			t.Error(n)
		}
	}
	if len(r8.Trace) != 3 || r8.Trace[0].Bits != 8 {
		t.Errorf("8-bit trace %+v", r8.Trace)
	}
	if len(r.Plots) != 4 {
		t.Fatalf("plots %v, want 4", r.Plots)
	}
	for _, f := range r.Plots {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v", f, len(b), err)
		}
		if filepath.Dir(f) != out {
			t.Errorf("%s is not in %s", f, out)
		}
		if strings.HasSuffix(f, ".png") && string(b[1:4]) != "PNG" || strings.HasSuffix(f, ".svg") && !strings.Contains(string(b[:200]), "<svg") {
			t.Errorf("%s: not the format its name says", f)
		}
	}
}

func quantizeOpts8() quantize.MLPOptions {
	return quantize.MLPOptions{WeightBits: 8, ActBits: 8, TanhBits: 8}
}

func TestDiffTreesFile(t *testing.T) {
	dir := t.TempDir()
	student := filepath.Join(dir, "student.json")
	if _, err := Distill(DistillOptions{Teacher: diffTeacher, Samples: 3000, HeldOut: 0.1, Seed: 1,
		Train: distill.Options{Trees: 3, Depth: 3, LearningRate: 1, L2: 1}}, student); err != nil {
		t.Fatal(err)
	}
	r, err := Diff(DiffOptions{Teacher: diffTeacher, Against: student, Samples: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Student, "integer IR") || len(r.Trace) != 0 || len(r.Plots) != 0 {
		t.Errorf("student %q, trace %d, plots %v", r.Student, len(r.Trace), r.Plots)
	}
	s := r.Stats
	if s.Rows != 1000 || !(s.MaxAbs >= s.P99 && s.P99 >= s.P50 && s.RMSE <= s.MaxAbs && s.RMSE > 0) {
		t.Errorf("stats %+v", s)
	}
	r, err = Diff(DiffOptions{Teacher: diffTeacher, Against: AgainstTrees, Samples: 1000, Seed: 1,
		Distill: DistillOptions{Samples: 3000, Train: distill.Options{Trees: 3, Depth: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	s = r.Stats
	if !strings.Contains(r.Student, "3 trees of depth 3") || s.Rows != 1000 || !(s.MaxAbs >= s.P99 && s.P99 >= s.P50 && s.RMSE <= s.MaxAbs && s.RMSE > 0) {
		t.Errorf("stats %+v", s)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	wide := filepath.Join(dir, "w.csv")
	if err := os.WriteFile(wide, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  DiffOptions
		want string
	}{
		{DiffOptions{Teacher: filepath.Join(dir, "missing.json")}, "missing.json"},
		{DiffOptions{Teacher: diffTeacher, Calib: wide}, "row 1 has 2 values; model rlcc_teacher takes 4 inputs"},
		{DiffOptions{Teacher: "../testdata/models/rlcc_lstm.onnx", Samples: 10}, "of an LSTM is not wired in yet"},
		{DiffOptions{Teacher: "../testdata/models/rlcc_xgb.json", Samples: 10}, "--target int8 takes a dense network"},
		{DiffOptions{Teacher: diffTeacher, Against: filepath.Join(dir, "nope.json"), Samples: 10}, "nope.json"},
	} {
		_, err := Diff(c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opt, err, c.want)
		}
	}
}
