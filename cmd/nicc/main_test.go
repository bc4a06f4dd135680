package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// nicc runs the CLI in-process and returns its exit code, stdout and stderr.
func nicc(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"nicc"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

const models = "../../testdata/models/"

func TestInspectEveryShippedModel(t *testing.T) {
	cases := []struct{ file, kind, shape string }{
		{"rlcc_teacher.onnx", "mlp", "4 → 12 relu → 12 relu → 1 tanh"},
		{"rlcc_teacher.json", "mlp", "4 → 12 relu → 12 relu → 1 tanh"},
		{"rlcc_lstm.onnx", "lstm", "4 → 12 relu → LSTM 12 → 1 tanh"},
		{"rlcc_xgb.json", "trees", "10 trees, depth ≤ 4"},
	}
	for _, c := range cases {
		code, out, errOut := nicc(t, "inspect", models+c.file)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
		for _, want := range []string{"kind     " + c.kind, c.shape} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: inspect output lacks %q:\n%s", c.file, want, out)
			}
		}
		code, out, _ = nicc(t, "inspect", models+c.file, "--json")
		var s struct {
			Kind   string `json:"kind"`
			Shape  string `json:"shape"`
			FLOPs  int    `json:"flops_per_decision"`
			Params int    `json:"params"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil || code != exitOK {
			t.Fatalf("%s: --json exit %d, %v:\n%s", c.file, code, err, out)
		}
		if s.Kind != c.kind || !strings.HasPrefix(s.Shape, c.shape) || s.FLOPs <= 0 || s.Params <= 0 {
			t.Errorf("%s: --json gave %+v", c.file, s)
		}
	}
}

// The teacher is 4·12 + 12·12 + 12·1 = 204 multiply-accumulates: 408 FLOPs, plus 24 ReLUs and one tanh.
func TestInspectCountsTeacherOps(t *testing.T) {
	_, out, _ := nicc(t, "inspect", models+"rlcc_teacher.onnx")
	if !strings.Contains(out, "433 FLOPs per decision (204 mul-add, 0 add, 24 compare, 1 tanh/sigmoid)") {
		t.Errorf("ops line wrong:\n%s", out)
	}
}

// TestEvalMatchesTorch checks eval's printed lines, parsed back, against torch's outputs: the
// header names the model's inputs, so the reference file is read as it is; the same rows with
// the input columns alone must give the same lines.
func TestEvalMatchesTorch(t *testing.T) {
	f, err := os.Open(models + "rlcc_teacher.ref.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := model.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	var inputs strings.Builder
	for _, r := range ref.Data {
		for j, v := range r[:4] {
			if j > 0 {
				inputs.WriteByte(',')
			}
			inputs.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		inputs.WriteByte('\n')
	}
	inputsOnly := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(inputsOnly, []byte(inputs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"rlcc_teacher.json", models + "rlcc_teacher.ref.csv"}, {"rlcc_teacher.onnx", inputsOnly}} {
		code, out, errOut := nicc(t, "eval", models+c[0], "--input", c[1])
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c[0], code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(ref.Data) {
			t.Fatalf("%s: eval printed %d lines for %d rows", c[0], len(lines), len(ref.Data))
		}
		for i, line := range lines {
			y, err := strconv.ParseFloat(line, 64)
			if err != nil {
				t.Fatalf("%s: line %d: %v", c[0], i+1, err)
			}
			if want := ref.Data[i][4]; math.Abs(y-want) > 1e-4 {
				t.Errorf("%s: row %d: eval %v, torch %v", c[0], i+1, y, want)
			}
		}
	}
}

func TestEvalLSTMModes(t *testing.T) {
	dir := t.TempDir()
	// Two steps of one flow from zero state, then the same two steps with explicit state.
	seq := filepath.Join(dir, "seq.csv")
	os.WriteFile(seq, []byte("1,0.5,1,0.5\n0.9,30,1,0.5\n"), 0o644)
	code, out, errOut := nicc(t, "eval", models+"rlcc_lstm.onnx", "--input", seq)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	steps := strings.Fields(out)
	zero := strings.TrimSuffix(strings.Repeat("0,", 24), ",")
	first := filepath.Join(dir, "first.csv")
	os.WriteFile(first, []byte("1,0.5,1,0.5,"+zero+"\n"), 0o644)
	_, out1, _ := nicc(t, "eval", models+"rlcc_lstm.onnx", "--input", first)
	row1 := strings.Split(strings.TrimSpace(out1), ",")
	if len(row1) != 25 || row1[0] != steps[0] {
		t.Fatalf("explicit zero state gave %v, sequence gave %s", row1[:1], steps[0])
	}
	second := filepath.Join(dir, "second.csv")
	os.WriteFile(second, []byte("0.9,30,1,0.5,"+strings.Join(row1[1:], ",")+"\n"), 0o644)
	_, out2, _ := nicc(t, "eval", models+"rlcc_lstm.onnx", "--input", second)
	if got := strings.Split(strings.TrimSpace(out2), ",")[0]; got != steps[1] {
		t.Errorf("state carried explicitly gave %s, sequence gave %s", got, steps[1])
	}
}

// TestEvalLSTMReferenceAsIs evaluates torch's LSTM reference file as it is: its header names
// the inputs, h0_0..h0_11 and c0_0..c0_11, then torch's y, hn and cn, so each row is one step
// from its own state and prints y, h', c', which must match torch's columns.
func TestEvalLSTMReferenceAsIs(t *testing.T) {
	ref, err := model.ReadCSVFile(models + "rlcc_lstm.ref.csv")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := nicc(t, "eval", models+"rlcc_lstm.onnx", "-i", models+"rlcc_lstm.ref.csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(ref.Data) {
		t.Fatalf("%d lines for %d rows", len(lines), len(ref.Data))
	}
	for i, line := range lines {
		got := strings.Split(line, ",")
		want := ref.Data[i][28:] // y, hn, cn
		if len(got) != len(want) {
			t.Fatalf("row %d: %d values, want %d", i+1, len(got), len(want))
		}
		for j, g := range got {
			v, err := strconv.ParseFloat(g, 64)
			if err != nil || math.Abs(v-want[j]) > 1e-5 {
				t.Fatalf("row %d value %d: eval %s, torch %v (%v)", i+1, j+1, g, want[j], err)
			}
		}
	}
	// Without the state columns' names the same header selects the inputs alone: one flow's
	// consecutive steps, one y a row.
	seq := filepath.Join(t.TempDir(), "seq.csv")
	os.WriteFile(seq, []byte("a_prev,o,a_prev2,o_prev,y\n1,0.5,1,0.5,9\n0.9,30,1,0.5,9\n"), 0o644)
	code, out, errOut = nicc(t, "eval", models+"rlcc_lstm.onnx", "-i", seq)
	if code != exitOK || len(strings.Fields(out)) != 2 || strings.Contains(out, ",") {
		t.Errorf("inputs by name: exit %d, %q, %s", code, out, errOut)
	}
}

// TestEvalHeaderInAnyOrder: a header naming every input selects the columns by name, also
// when the row holds just the inputs in another order.
func TestEvalHeaderInAnyOrder(t *testing.T) {
	dir := t.TempDir()
	inOrder, shuffled := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	os.WriteFile(inOrder, []byte("1.1,40,0.9,3\n0.9,-0.5,1,0\n"), 0o644)
	os.WriteFile(shuffled, []byte("o_prev,o,a_prev2,a_prev\n3,40,0.9,1.1\n0,-0.5,1,0.9\n"), 0o644)
	_, want, _ := nicc(t, "eval", models+"rlcc_teacher.onnx", "-i", inOrder)
	code, got, errOut := nicc(t, "eval", models+"rlcc_teacher.onnx", "-i", shuffled)
	if code != exitOK || got != want || strings.Count(got, "\n") != 2 {
		t.Errorf("exit %d %s: by name %q, in order %q", code, errOut, got, want)
	}
}

func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	teacher, _ := os.ReadFile(models + "rlcc_teacher.onnx")
	truncated := write("trunc.onnx", string(teacher[:len(teacher)/2]))
	empty := write("empty.json", "")
	garbage := write("garbage.bin", "\x7fELF\x02\x01")
	narrow := write("narrow.csv", "1,2,3\n")
	nan := write("nan.csv", "1,NaN,1,0\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"inspect", truncated}, truncated + ": "},
		{[]string{"inspect", empty}, empty + ": file is empty"},
		{[]string{"inspect", garbage}, "cannot tell the model format"},
		{[]string{"inspect", filepath.Join(dir, "absent.onnx")}, "no such file"},
		{[]string{"inspect", "--format", "caffe", models + "rlcc_teacher.onnx"}, `unknown model format "caffe"`},
		{[]string{"inspect"}, "takes one MODEL file"},
		{[]string{"eval", models + "rlcc_teacher.onnx", "--input", narrow}, "rows have 3 values; model rlcc_teacher takes 4 inputs"},
		{[]string{"eval", models + "rlcc_teacher.onnx", "--input", nan}, "line 1: value 2 is NaN"},
		{[]string{"eval", models + "rlcc_teacher.onnx"}, `"input" not set`},
	}
	for _, c := range cases {
		code, _, errOut := nicc(t, c.args...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitBadInput)
		}
		if !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line containing %q", c.args, errOut, c.want)
		}
	}
}
