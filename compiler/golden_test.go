package compiler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/target"
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
	_, mlp := compileOnce(t, "mlp-calib-file", CompileOptions{Model: teacherNN, Handler: HandlerNone, Vectors: 2000,
		Int8: &Int8Options{Calib: calib, Samples: DefaultCalibSamples}})
	for _, dir := range []string{rlcc, bc, mlp} {
		cp, err := OpenCompiled(dir, "")
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if cp.Firmware != filepath.Join(dir, FirmwareFile) || !IsCompileDir(dir) {
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
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, ReportFile)+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want one line from %s containing %q", err, filepath.Join(dir, ReportFile), c.want)
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
const seedReport = `{"model":{"inputs":["a","b"]},"handler":"none","entry":"nicc_policy",
"inputs":[{"name":"a","frac":16,"min":-5,"max":5},{"name":"b","frac":0,"min":0,"max":9}],
"budget":{"core":{"name":"dpa"}},"manifest":{"files":[],"verdicts":{"verify":"pass"}}}`

func TestCSVVectors(t *testing.T) {
	r, err := parseReport([]byte(seedReport))
	if err != nil {
		t.Fatal(err)
	}
	// The header selects a and b by name; a is Q16 clamped to [-5, 5] raw, b Q0.
	rr, err := model.NewRowReader(strings.NewReader("b,x,a\n3.4,9,0.00002\n100,0,-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := csvVectors(rr, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []budget.Vector{
		{Line: 2, Args: []budget.Arg{{Bytes: target.Int32Bytes([]int32{1, 3})}}},
		{Line: 3, Args: []budget.Arg{{Bytes: target.Int32Bytes([]int32{-5, 9})}}},
	}
	if d := cmp.Diff(want, vs); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// An LSTM's state words follow x, zeroed.
	r.LSTM = &LSTMInfo{StateWords: 6}
	rr, _ = model.NewRowReader(strings.NewReader("1,2\n"))
	if vs, err = csvVectors(rr, r); err != nil || len(vs[0].Args) != 2 || !bytes.Equal(vs[0].Args[1].Bytes, make([]byte, 24)) {
		t.Errorf("stateful: %+v, %v", vs, err)
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(seedReport))
	f.Add([]byte(strings.Replace(seedReport, `"none"`, `"rlcc"`, 1)))
	f.Add([]byte(`{"handler":"none","lstm":{"state_words":99}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseReport(data)
		if err != nil {
			return
		}
		if len(r.Inputs) == 0 || len(r.Inputs) != len(r.Model.Inputs) || r.Budget == nil {
			t.Fatalf("accepted %+v", r)
		}
		for _, in := range r.Inputs {
			in.format().Quantize(1)
		}
	})
}

func FuzzCSVVectors(f *testing.F) {
	f.Add("1,2\n3,4\n", true)
	f.Add("b,a\n1e9,-1e9\nNaN,1\n", true)
	f.Add("1,2,3\n2147483648,0,0\n", false)
	f.Add("x\n1.5\n", false)
	r, err := parseReport([]byte(seedReport))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string, formats bool) {
		rr, err := model.NewRowReader(strings.NewReader(data))
		if err != nil {
			return
		}
		rep := r
		if !formats {
			rep = nil
		}
		vs, err := csvVectors(rr, rep)
		if err != nil {
			return
		}
		for _, v := range vs {
			if len(v.Args) != 1 || len(v.Args[0].Bytes)%4 != 0 || (formats && len(v.Args[0].Bytes) != 8) {
				t.Fatalf("line %d: %+v", v.Line, v)
			}
		}
	})
}
