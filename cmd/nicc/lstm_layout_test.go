package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// The shipped LSTM policy and the same weights exported from nn.LSTM(batch_first=True), which
// torch writes with Transposes around the LSTM (testdata/gen/lstm.py).
const (
	lstmSeqFirst   = models + "rlcc_lstm.onnx"
	lstmBatchFirst = models + "rlcc_lstm_batch_first.onnx"
)

// TestInspectBatchFirstLSTM: inspect shows the same IR for both layouts; only the model's name
// and doc string differ.
func TestInspectBatchFirstLSTM(t *testing.T) {
	var outs [2]string
	for i, f := range []string{lstmSeqFirst, lstmBatchFirst} {
		code, out, errOut := nicc(t, "inspect", f)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		var keep []string
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "model ") && !strings.HasPrefix(line, "doc ") {
				keep = append(keep, line)
			}
		}
		outs[i] = strings.Join(keep, "\n")
	}
	if outs[0] != outs[1] {
		t.Errorf("inspect differs beyond the name and doc:\n%s\n---\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[1], "4 → 12 relu → LSTM 12 → 1 tanh") {
		t.Errorf("batch_first shape:\n%s", outs[1])
	}
}

// TestEvalLSTMSequencesMatchTorch runs nicc eval on each sequence of rlcc_lstm.steps.csv (rows
// of inputs: consecutive steps of one flow from the zero state) for both layouts, and compares
// every step's y with torch's, which ran the whole sequence at once.
func TestEvalLSTMSequencesMatchTorch(t *testing.T) {
	const seqs, steps, inputs = 8, 32, 4
	f, err := os.Open(models + "rlcc_lstm.steps.csv")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := model.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Data) != seqs*steps {
		t.Fatalf("rlcc_lstm.steps.csv has %d rows, want %d", len(ref.Data), seqs*steps)
	}
	dir := t.TempDir()
	for _, m := range []string{lstmSeqFirst, lstmBatchFirst} {
		worst := 0.0
		for s := range seqs {
			rows := ref.Data[s*steps : (s+1)*steps]
			var csv strings.Builder
			for _, row := range rows {
				for j, v := range row[2 : 2+inputs] {
					if j > 0 {
						csv.WriteByte(',')
					}
					csv.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				}
				csv.WriteByte('\n')
			}
			in := filepath.Join(dir, "seq"+strconv.Itoa(s)+".csv")
			if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := nicc(t, "eval", m, "--input", in)
			if code != exitOK {
				t.Fatalf("%s: sequence %d: exit %d: %s", m, s, code, errOut)
			}
			lines := strings.Fields(out)
			if len(lines) != steps {
				t.Fatalf("%s: sequence %d: eval printed %d lines for %d steps", m, s, len(lines), steps)
			}
			for i, line := range lines {
				y, err := strconv.ParseFloat(line, 64)
				if err != nil {
					t.Fatalf("%s: sequence %d step %d: %v", m, s, i, err)
				}
				want := rows[i][2+inputs]
				d := math.Abs(y - want)
				worst = max(worst, d)
				if !(d <= 1e-5) {
					t.Errorf("%s: sequence %d step %d: eval %v, torch %v (off by %.3g)", filepath.Base(m), s, i, y, want, d)
				}
			}
		}
		t.Logf("%s: %d sequences × %d steps, max |Δy| %.3g", filepath.Base(m), seqs, steps, worst)
	}
}

// TestCompileBatchFirstLSTM: compile --target int8 builds the same firmware from both layouts
// (in the branch form, which builds once: the layout reaches every form the same).
// The sources differ only in the model's name and hash in their comments. The compiles are
// compileDir's, shared with TestEvalDirNetworks; their report.json is what --json prints
// (TestCompileJSON).
func TestCompileBatchFirstLSTM(t *testing.T) {
	t.Parallel()
	type report struct {
		Model struct {
			Name   string `json:"name"`
			SHA256 string `json:"sha256"`
		} `json:"model"`
		Files        []string        `json:"files"`
		Quantization json.RawMessage `json:"quantization"`
		LSTM         json.RawMessage `json:"lstm"`
		Verify       json.RawMessage `json:"verify"`
	}
	var reps [2]report
	var dirs [2]string
	for i, m := range []string{lstmSeqFirst, lstmBatchFirst} {
		dirs[i] = compileDir(t, m, "--target", "int8", "--samples", "4000", "--form", "branch")
		out, err := os.ReadFile(filepath.Join(dirs[i], "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &reps[i]); err != nil {
			t.Fatalf("%s: report.json: %v", m, err)
		}
	}
	a, b := reps[0], reps[1]
	if b.Model.Name != "rlcc_lstm_batch_first" || a.Model.Name != "rlcc_lstm" || a.Model.SHA256 == "" {
		t.Fatalf("model names %q and %q, hash %q", a.Model.Name, b.Model.Name, a.Model.SHA256)
	}
	for _, c := range []struct {
		what string
		x, y json.RawMessage
	}{{"quantization", a.Quantization, b.Quantization}, {"lstm", a.LSTM, b.LSTM}, {"verify", a.Verify, b.Verify}} {
		if len(c.x) == 0 || !bytes.Equal(c.x, c.y) {
			t.Errorf("report %s differs:\n%s\n%s", c.what, c.x, c.y)
		}
	}
	if !reflect.DeepEqual(a.Files, b.Files) || len(a.Files) == 0 {
		t.Fatalf("files %q and %q", a.Files, b.Files)
	}
	for _, f := range append(a.Files, "firmware.elf") {
		x, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(dirs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if f != "firmware.elf" {
			y = bytes.ReplaceAll(y, []byte(b.Model.SHA256), []byte(a.Model.SHA256))
			y = bytes.ReplaceAll(y, []byte(b.Model.Name), []byte(a.Model.Name))
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs beyond the model's name and hash", f)
		}
	}
}

// TestDiffBatchFirstLSTM: nicc diff measures the same integer LSTM for both layouts.
func TestDiffBatchFirstLSTM(t *testing.T) {
	var outs [2]map[string]any
	for i, m := range []string{lstmSeqFirst, lstmBatchFirst} {
		code, out, errOut := nicc(t, "diff", m, "--samples", "1000", "--json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", m, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &outs[i]); err != nil {
			t.Fatalf("%s: --json: %v", m, err)
		}
	}
	for _, k := range []string{"teacher_kind", "against", "student", "calib", "stats", "trace"} {
		if outs[0][k] == nil || !reflect.DeepEqual(outs[0][k], outs[1][k]) {
			t.Errorf("diff --json %s: %v and %v", k, outs[0][k], outs[1][k])
		}
	}
}

// TestTransposeOtherPermRefused: a Transpose that moves the feature axis (the batch_first export
// with its first perm [1 0 2] patched to [0 2 1]) is bad input: exit 2, one line naming the node.
func TestTransposeOtherPermRefused(t *testing.T) {
	data, err := os.ReadFile(lstmBatchFirst)
	if err != nil {
		t.Fatal(err)
	}
	// perm's ints as onnx writes them: field 8, varint 1, 0, 2.
	swap, other := []byte{0x40, 1, 0x40, 0, 0x40, 2}, []byte{0x40, 0, 0x40, 2, 0x40, 1}
	if bytes.Count(data, swap) != 2 {
		t.Fatalf("%s: want the two perms [1 0 2] torch writes", lstmBatchFirst)
	}
	bad := filepath.Join(t.TempDir(), "perm.onnx")
	if err := os.WriteFile(bad, bytes.Replace(data, swap, other, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"inspect", bad}, {"compile", bad, "--target", "int8", "--out", filepath.Join(t.TempDir(), "fw")}, {"diff", bad}} {
		code, out, errOut := nicc(t, cmd...)
		want := `node "/lstm/Transpose" (Transpose): perm [0 2 1] on shape [1 1 12] is not supported: nicc accepts a Transpose only as the swap of the batch and sequence axes of a [batch seq feature] tensor (perm [1 0 2]), as torch writes around nn.LSTM(batch_first=True)`
		if code != exitBadInput || out != "" || !strings.HasPrefix(errOut, "nicc: "+bad+": ") || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line naming the file and\n%s", cmd[0], code, out, errOut, exitBadInput, want)
		}
	}
}
