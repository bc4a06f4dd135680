package compiler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/golden"
)

// copyReport copies the compile directory dir into a new one, its report.json edited by edit.
func copyReport(t *testing.T, dir string, edit func(r map[string]any)) string {
	t.Helper()
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := editReport(out, edit); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenCompiledRebuildsGolden rebuilds the golden model of tree compiles under both
// handlers and of an integer MLP calibrated on a file: each renders the C its compile emitted
// (OpenCompiled checks the hash) and evaluates as the compile's did.
func TestOpenCompiledRebuildsGolden(t *testing.T) {
	t.Parallel()
	calib := filepath.Join(t.TempDir(), "calib.csv")
	b, err := os.ReadFile("../testdata/models/rlcc_teacher.ref.csv")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(calib, b, 0o644)
	_, rlcc := rlccReport(t)
	_, bc := bcReport(t)
	_, mlp := compileOnce(t, "mlp-calib-file", CompileOptions{Model: teacherNN, Handler: artifact.HandlerNone, Vectors: 2000,
		Int8: &golden.Int8Options{Calib: calib, Samples: golden.DefaultCalibSamples}})
	for _, dir := range []string{rlcc, bc, mlp} {
		cp, err := OpenCompiled(dir, "")
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if cp.Firmware != filepath.Join(dir, artifact.FirmwareFile) || !artifact.IsCompileDir(dir) {
			t.Errorf("%s: firmware %s", dir, cp.Firmware)
		}
	}
	cp, err := OpenCompiled(mlp, "")
	if err != nil {
		t.Fatal(err)
	}
	if g := cp.Report.Golden; g.IR != "mlp" || g.Calib == nil || g.Calib.Path != calib || g.MLP == nil || g.MLP.WeightBits == 0 {
		t.Errorf("golden %+v", g)
	}

	// What the rebuild refuses: each a one-line error naming the report.
	cases := []struct {
		dir  string
		edit func(r map[string]any)
		want string
	}{
		{rlcc, func(r map[string]any) { delete(r, "golden") }, "records no golden model (an older nicc wrote it): compile again"},
		{rlcc, func(r map[string]any) { r["golden"].(map[string]any)["sources_sha256"] = "00" }, "renders other C than the compile emitted"},
		{rlcc, func(r map[string]any) { r["model"].(map[string]any)["sha256"] = "ab" }, "has changed since the compile (model IR sha256 "},
		{rlcc, func(r map[string]any) { r["golden"].(map[string]any)["ir"] = "mlp" }, "model rlcc_xgb is a tree ensemble; --target int takes a dense network"},
		{rlcc, func(r map[string]any) { r["handler"] = "auto" }, `handler "auto": want rlcc or none`},
		{rlcc, func(r map[string]any) { r["entry"] = "main" }, `entry "main": the rlcc handler's is nicc_on_event`},
		{rlcc, func(r map[string]any) { r["inputs"] = []any{} }, "0 input formats for 4 model inputs"},
		{bc, func(r map[string]any) { r["inputs"].([]any)[0].(map[string]any)["frac"] = 99 }, "input 1 (Column_0): format Q99"},
		{mlp, func(r map[string]any) { r["golden"].(map[string]any)["calib"].(map[string]any)["sha256"] = "cd" }, "calibration file " + calib + " has changed since the compile"},
	}
	for _, c := range cases {
		dir := copyReport(t, c.dir, c.edit)
		_, err := OpenCompiled(dir, "")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, artifact.ReportFile)+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want one line from %s containing %q", err, filepath.Join(dir, artifact.ReportFile), c.want)
		}
	}
}

func TestWriteVectorsRoundTrip(t *testing.T) {
	vs := []budget.Vector{
		{Args: []budget.Arg{{Bytes: []byte{1, 2, 0xff}}, {Int: 1<<64 - 1}}},
		{Args: []budget.Arg{{Bytes: []byte{}}, {Int: 7}, {Bytes: make([]byte, 48)}}},
	}
	var b bytes.Buffer
	if err := budget.WriteVectors(&b, vs); err != nil {
		t.Fatal(err)
	}
	if want := "hex:0102ff 18446744073709551615\nhex: 7 hex:" + strings.Repeat("00", 48) + "\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	got, err := budget.ReadVectors(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if d := cmp.Diff(vs[i].Args, got[i].Args); d != "" {
			t.Errorf("vector %d (-wrote +read):\n%s", i, d)
		}
	}
}

// A report for the parser's tests: the fields ReadReport checks.
