package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const lgbDir = "../../testdata/lightgbm/"

func TestCompileRLCC(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--out", out, "--vectors", "20000")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr (no progress bar off a terminal): %q", stderr)
	}
	for label, want := range map[string]string{
		"handler":  "handler rlcc: nicc_on_event(event, flow context) around nicc_policy(x)",
		"verified": "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"fidelity": "policy output y over ",
		"WCET":     "WCET nicc_on_event ",
		"budget":   "budget 2.000 µs: headroom ",
		"size":     "flow state 24 of 48 bytes",
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^verified +\d+ vectors \(\d+ policy calls, \d+ events in \d+ sequences\)`).MatchString(stdout) {
		t.Errorf("verified line: %q", line(stdout, "verified"))
	}
	if !regexp.MustCompile(`(?m)^ +nicc_policy alone \d+ cycles = 0\.\d{3} µs`).MatchString(stdout) {
		t.Errorf("no policy-alone WCET:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
		t.Error(err)
	}
}

func TestCompileJSON(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", lgbDir+"lg_dart_breast_cancer.model", "--out", out, "--handler", "none",
		"--ranges", lgbDir+"breast_cancer_test.tsv", "--predictions", lgbDir+"lg_dart_breast_cancer_true_predictions.txt",
		"--vectors", "5000", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Handler string `json:"handler"`
		Verify  struct {
			Vectors    int `json:"vectors"`
			Mismatches int `json:"mismatches"`
		} `json:"verify"`
		Tool struct {
			Firmware struct {
				MaxAbs float64 `json:"max_abs_err"`
			} `json:"firmware"`
		} `json:"fidelity_tool"`
		Budget struct {
			Fits bool `json:"fits"`
		} `json:"budget"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if r.Handler != "none" || r.Verify.Vectors < 5000 || r.Verify.Mismatches != 0 || !r.Budget.Fits || r.Tool.Firmware.MaxAbs > 1e-3 {
		t.Errorf("report %+v", r)
	}
	file, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || strings.TrimSpace(string(file)) != strings.TrimSpace(stdout) {
		t.Errorf("report.json differs from --json output (%v)", err)
	}
}

func TestCompileOverBudgetExits1(t *testing.T) {
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--out", t.TempDir(), "--vectors", "1000", "--budget", "100ns")
	if code != exitCheck {
		t.Fatalf("exit %d, want %d: %s", code, exitCheck, stderr)
	}
	if !regexp.MustCompile(`^nicc: nicc_on_event is over budget on dpa: WCET \d+ cycles = 0\.\d{3} µs > budget 0\.100 µs\n$`).MatchString(stderr) {
		t.Errorf("stderr %q", stderr)
	}
	if !strings.Contains(line(stdout, "budget"), "over budget") {
		t.Errorf("the summary is printed too; budget line %q", line(stdout, "budget"))
	}
}

func TestCompileBadInputExits2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{models + "rlcc_xgb.json"}, "compile needs --out DIR"},
		{[]string{lgbDir + "lg_dart_breast_cancer.model", "--handler", "rlcc"}, "has 30 inputs, wider than the RL-CC handler's 4"},
		{[]string{models + "rlcc_teacher.onnx"}, "is an mlp network; nicc compile takes tree ensembles"},
		{[]string{models + "rlcc_xgb.json", "--handler", "lstm"}, `unknown handler "lstm"`},
		{[]string{models + "rlcc_xgb.json", "--budget", "fast"}, `budget "fast"`},
		{[]string{models + "rlcc_xgb.json", "--vectors", "0"}, "--vectors 0: want at least 1"},
		{[]string{lgbDir + "lg_kddcup99.model"}, "lg_kddcup99.model"},
		{[]string{models + "rlcc_lstm.onnx", "--target", "int8"}, "LSTM int8 is not supported yet"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--calib", lgbDir + "breast_cancer_test.tsv"}, "row 1 has 30 values; model rlcc_teacher takes 4 inputs"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--weight-bits", "4"}, "--weight-bits 4: want 8 or 16"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--act-bits", "32"}, "--act-bits 32: want 8 or 16"},
		{[]string{models + "rlcc_teacher.json", "--target", "fp16"}, `--target "fp16": want trees, int8 or auto`},
	}
	for _, c := range cases {
		args := append([]string{"compile"}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "--out") && c.want != "compile needs --out DIR" {
			args = append(args, "--out", t.TempDir())
		}
		code, _, stderr := nicc(t, args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line containing %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}

func TestCompileInt8(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_teacher.json", "--target", "int8", "--out", out,
		"--core", "dpa", "--samples", "3000", "--vectors", "5000")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for label, want := range map[string]string{
		"model":     "dense network",
		"handler":   "handler rlcc: nicc_on_event(event, flow context) around nicc_policy(x)",
		"quantized": "int MLP: weights int16, hidden activations int16 (per-channel scales true), tanh grid int16, output Q16; calibration 3000 RL-CC states",
		"verified":  "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"WCET":      "WCET nicc_on_event ",
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ +vs float teacher on 3016 calibration rows: max \|dy\| \S+ \(\S+/128\), direction flips \S+%$`).MatchString(stdout) {
		t.Errorf("no fidelity against the teacher:\n%s", stdout)
	}
	code, stdout, stderr = nicc(t, "compile", models+"rlcc_teacher.json", "--target", "int8", "--out", t.TempDir(),
		"--handler", "none", "--calib", models+"rlcc_teacher.ref.csv", "--weight-bits", "8", "--vectors", "3000", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Entry string `json:"entry"`
		Int8  struct {
			WeightBits int     `json:"weight_bits"`
			ActBits    int     `json:"act_bits"`
			MaxAbsDy   float64 `json:"max_abs_dy"`
		} `json:"int8"`
		Verify struct {
			Mismatches int `json:"mismatches"`
		} `json:"verify"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Entry != "nicc_policy" || r.Int8.WeightBits != 8 || r.Int8.ActBits != 16 || r.Int8.MaxAbsDy <= 0 || r.Verify.Mismatches != 0 {
		t.Errorf("report %+v", r)
	}
}
