package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
)

const lgbDir = "../../testdata/lightgbm/"

func TestCompileRLCC(t *testing.T) {
	t.Parallel()
	c := rlccXGB(t)
	out, stdout, stderr := c.dir, c.stdout, c.stderr
	if stderr != "" {
		t.Errorf("stderr (no progress bar off a terminal): %q", stderr)
	}
	for label, want := range map[string]string{
		"handler":  "handler rlcc: nicc_on_event(event, flow context) around nicc_policy(x)",
		"verified": "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"fidelity": "policy output y over ",
		"WCET":     "WCET nicc_on_event ",
		"budget":   "budget 2 µs: headroom ",
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
	checkModelIRHash(t, stdout, out, models+"rlcc_xgb.json")
}

// checkModelIRHash checks that the summary's model line labels its hash as the model IR's
// (it said "sha256" beside the file's path, but hashes nicc's model, not the file, issue 26):
// the hash is report.json's model.sha256, and not the file's.
func checkModelIRHash(t *testing.T, stdout, dir, file string) {
	t.Helper()
	var rep struct {
		Model struct {
			Hash string `json:"sha256"`
		} `json:"model"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Model.Hash) != 64 {
		t.Fatalf("report.json model.sha256 %q: %v", rep.Model.Hash, err)
	}
	fb, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fileHash := sha256.Sum256(fb)
	if l := line(stdout, "model"); !strings.HasSuffix(l, ", model IR sha256 "+rep.Model.Hash[:12]) || strings.Contains(l, hex.EncodeToString(fileHash[:])[:12]) {
		t.Errorf("model line %q: want it to end in \", model IR sha256 %.12s\" (report.json's), not the file's %x", l, rep.Model.Hash, fileHash[:6])
	}
}

func TestCompileJSON(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", lgbDir+"lg_dart_breast_cancer.model", "--out", out, "--handler", "none",
		"--ranges", lgbDir+"breast_cancer_test.tsv", "--predictions", lgbDir+"lg_dart_breast_cancer_true_predictions.txt",
		"--vectors", "5000", "--json", "--form", "walk") // the test is about --json, not the form: walk builds fastest
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

// Over budget: exit 1 with one line, the summary printed with the failure, and report.json
// (what --json prints: TestCompileMismatchWritesReport, TestCompileUBSanWritesReport) written
// with it, from one compile. The walk form (one build, and the cheapest to build: the test is
// not about the form) with 300 ns: above its lower bound (230 cycles, 0.128 µs), so fit lets
// it build, and below its WCET (749 cycles, 0.416 µs).
func TestCompileOverBudgetExits1(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := nicc(t, "compile", models+"rlcc_xgb.json", "--out", out, "--vectors", "1000", "--budget", "300ns", "--form", "walk")
	if code != exitCheck {
		t.Fatalf("exit %d, want %d: %s", code, exitCheck, stderr)
	}
	if !regexp.MustCompile(`^nicc: nicc_on_event is over budget on dpa: WCET \d+ cycles = 0\.\d{3} µs > budget 0\.3 µs\n$`).MatchString(stderr) {
		t.Errorf("stderr %q", stderr)
	}
	if !strings.Contains(line(stdout, "budget"), "over budget") {
		t.Errorf("the summary is printed too; budget line %q", line(stdout, "budget"))
	}
	r := readFailedReport(t, out, "")
	if f := r.Failure; f.Stage != "budget" || f.Kind != "over_budget" || "nicc: "+f.Message+"\n" != stderr || r.Budget == nil || r.Budget.Fits {
		t.Errorf("failure %+v, budget %+v, stderr %q", f, r.Budget, stderr)
	}
	if want := []string{"load", "quantize", "fit", "emit", "build", "verify", "budget", "report"}; !slices.Equal(r.stages(), want) {
		t.Errorf("stages %v, want %v", r.stages(), want)
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
		{[]string{models + "rlcc_xgb.json", "--num-vectors", "0"}, "--num-vectors 0: want at least 1"},
		{[]string{models + "rlcc_xgb.json", "--vectors", "0"}, "--num-vectors 0: want at least 1"}, // the old spelling
		{[]string{lgbDir + "lg_kddcup99.model"}, "lg_kddcup99.model"},
		{[]string{models + "rlcc_lstm.onnx", "--target", "int8", "--predictions", models + "rlcc_lstm.ref.csv", "--ranges", models + "rlcc_teacher.ref.csv"}, "--predictions compares one-step outputs"},
		{[]string{models + "rlcc_lstm.onnx", "--target", "int8", "--weight-bits", "8"}, "--weight-bits and --act-bits apply to dense networks"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--calib", lgbDir + "breast_cancer_test.tsv"}, "row 1 has 30 values; model rlcc_teacher takes 4 inputs"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--weight-bits", "4"}, "--weight-bits 4: want 8 or 16"},
		{[]string{models + "rlcc_teacher.json", "--target", "int8", "--act-bits", "32"}, "--act-bits 32: want 8 or 16"},
		{[]string{models + "rlcc_teacher.json", "--target", "fp16"}, `--target "fp16": want trees, int (or its old name int8) or auto`},
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
	t.Parallel()
	// The compile TestEvalDirNetworks runs (compiledOK, 3000 vectors): 4000 calibration states;
	// a dense network has the one code form, which --form branch names.
	c := compiledOK(t, models+"rlcc_teacher.json", "--target", "int8", "--samples", "4000", "--form", "branch")
	code, stdout, stderr := c.code, c.stdout, c.stderr
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for label, want := range map[string]string{
		"model":     "dense network",
		"handler":   "handler rlcc: nicc_on_event(event, flow context) around nicc_policy(x)",
		"quantized": "int MLP w16/a16, per-channel scales, packed lanes, unit output weights: weights int16, hidden activations int16, tanh grid int16, output Q16; calibration 4000 RL-CC states",
		"verified":  "golden == host C == fwsim, 0 mismatches; UBSan clean",
		"WCET":      "WCET nicc_on_event ",
	} {
		if l := line(stdout, label); !strings.Contains(l, want) {
			t.Errorf("line %q is %q, want it to contain %q; output:\n%s", label, l, want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ +vs float teacher on 4016 calibration rows: max \|dy\| \S+ \(\S+/128\), direction flips \S+%$`).MatchString(stdout) {
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

// saveModel writes m as native JSON into a file called name.
func saveModel(t *testing.T, name string, m *model.Model) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := model.Save(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

// lstmModel is an RL-CC LSTM with hidden units: h and c take 2·hidden bytes of flow state.
func lstmModel(hidden int) *model.Model {
	mat := func(r, c int) [][]float64 {
		m := make([][]float64, r)
		for i := range m {
			m[i] = make([]float64, c)
		}
		return m
	}
	return &model.Model{Version: model.NativeVersion, Name: "wide_lstm", Inputs: []string{"a_prev", "o", "a_prev2", "o_prev"},
		Layers: []model.Layer{
			{Op: model.OpLSTM, In: 4, Out: hidden, W: mat(4*hidden, 4), R: mat(4*hidden, hidden)},
			{Op: model.OpDense, In: hidden, Out: 1, W: mat(1, hidden), Act: model.ActTanh},
		}}
}

// The bad inputs for --target int8: ranges that overflow int32 even after widening,
// NaN or Inf weights, recurrent state over 48 bytes, a calibration set of the wrong width or
// content. Each exits 2 with one line naming the file (and the layer, tensor or row).
func TestCompileInt8BadInputExits2(t *testing.T) {
	teacher, err := model.Load(models + "rlcc_teacher.json")
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, edit func(m *model.Model)) string {
		b, err := model.Marshal(teacher)
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		edit(m)
		return saveModel(t, name, m)
	}
	bigBias := variant("big_bias.json", func(m *model.Model) { m.Layers[0].B = slices.Repeat([]float64{1e30}, m.Layers[0].Out) })
	bigOut := variant("big_out.json", func(m *model.Model) {
		l := &m.Layers[len(m.Layers)-1]
		l.Act, l.W[0] = model.ActIdentity, slices.Repeat([]float64{1e6}, l.In)
	})
	hugeW := variant("huge_w.json", func(m *model.Model) {
		for j := range m.Layers[0].W {
			m.Layers[0].W[j] = []float64{1.7e308, -1.7e308, 1.7e308, -1.7e308}
		}
	})
	// The ONNX teacher with its first weight, a float32 in an initializer's raw_data, made NaN or Inf.
	onnx, err := os.ReadFile(models + "rlcc_teacher.onnx")
	if err != nil {
		t.Fatal(err)
	}
	w0 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(teacher.Layers[0].W[0][0])))
	if n := bytes.Count(onnx, w0); n != 1 {
		t.Fatalf("the teacher's first weight occurs %d times in rlcc_teacher.onnx, want once", n)
	}
	patched := func(name string, v float32) string {
		return writeFile(t, name, string(bytes.Replace(onnx, w0, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)), 1)))
	}
	calib := writeFile(t, "calib.csv", "1,0,1,0\n1.1,5,1,3\n")
	teacherJSON := models + "rlcc_teacher.json"
	int8Args := []string{"--target", "int8", "--vectors", "100", "--samples", "100"}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{bigBias, "--weight-bits", "8"}, []string{"big_bias.json: quantize: layer 0 bias 0 = 1e+30 does not fit int32"}},
		// (Without --weight-bits the automatic choice compiles it packed, the bias in z's units.)
		{[]string{bigBias, "--weight-bits", "16"}, []string{"big_bias.json: quantize: layer 0 bias 0 = 1e+30 does not fit int32"}},
		{[]string{bigOut, "--weight-bits", "8"}, []string{"big_out.json: quantize: output range [", "] does not fit int32"}},
		{[]string{bigOut}, []string{"big_out.json: quantize: output range [", "] does not fit int32"}},
		{[]string{hugeW}, []string{"huge_w.json: quantize: layer 0 channel 0: a calibration pre-activation is ", ": the weights overflow float64"}},
		{[]string{teacherJSON, "--handler", "none", "--weight-bits", "8", "--calib", writeFile(t, "huge.csv", "a_prev,o,a_prev2,o_prev\n1,0.5,1,0.5\n1e30,1,1,1\n")},
			[]string{"huge.csv: row 2: a_prev is 1e+30, beyond any int32 fixed-point input"}},
		{[]string{patched("nan_teacher.onnx", float32(math.NaN()))},
			[]string{"nan_teacher.onnx: ", `node "/0/MatMul" (MatMul): initializer "onnx::MatMul_13": element 0 is NaN`}},
		{[]string{patched("inf_teacher.onnx", float32(math.Inf(1)))},
			[]string{"inf_teacher.onnx: ", `node "/0/MatMul" (MatMul): initializer "onnx::MatMul_13": element 0 is +Inf`}},
		{[]string{writeFile(t, "inf.json", testutil.WithFirstWeight(t, readFile(t, teacherJSON), "1e400"))},
			[]string{"inf.json: ", "1e400", "layers.w"}},
		{[]string{saveModel(t, "lstm13.json", lstmModel(13))},
			[]string{"lstm13.json: model wide_lstm needs 50 bytes of flow state (the rlcc handler's 24 + h and c of 13 values each at int8 (26)), over the engine's 48-byte flow context"}},
		{[]string{saveModel(t, "lstm25.json", lstmModel(25)), "--handler", "none", "--calib", calib},
			[]string{"lstm25.json: model wide_lstm needs 50 bytes of flow state (the none handler's 0 + h and c of 25 values each at int8 (50))"}},
		{[]string{teacherJSON, "--calib", writeFile(t, "c3.csv", "1,2,3\n")}, []string{"c3.csv: row 1 has 3 values; model rlcc_teacher takes 4 inputs"}},
		{[]string{teacherJSON, "--handler", "none", "--calib", writeFile(t, "c5.csv", "1,2,3,4,5\n")}, []string{"c5.csv: row 1 has 5 values; model rlcc_teacher takes 4 inputs"}},
		{[]string{teacherJSON, "--calib", writeFile(t, "unknown.csv", "w,x,y,z\n1,2,3,4\n")},
			[]string{`unknown.csv: the header has no column "a_prev"; model rlcc_teacher takes 4 inputs (a_prev, o, a_prev2, o_prev)`}},
		{[]string{teacherJSON, "--calib", writeFile(t, "empty.csv", "")}, []string{"empty.csv: no data rows"}},
		{[]string{teacherJSON, "--calib", writeFile(t, "nan.csv", "1,2,3,4\n1,NaN,3,4\n")}, []string{"nan.csv: row 2: o is NaN: calibration values must be finite"}},
		{[]string{teacherJSON, "--calib", writeFile(t, "inf.csv", "1,2,3,4\n1,2,3,+Inf\n")}, []string{"inf.csv: row 2: o_prev is +Inf: calibration values must be finite"}},
		{[]string{teacherJSON, "--calib", writeFile(t, "text.csv", "1,2,3,4\n1,2,fast,4\n")}, []string{`text.csv: line 2: column 3: "fast" is not a number`}},
	}
	for _, c := range cases {
		args := append(append([]string{"compile"}, c.args...), append(int8Args, "--out", t.TempDir())...)
		code, stdout, stderr := nicc(t, args...)
		ok := code == exitBadInput && stdout == "" && strings.HasPrefix(stderr, "nicc: ") && strings.Count(stderr, "\n") == 1
		for _, w := range c.want {
			ok = ok && strings.Contains(stderr, w)
		}
		if !ok {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and one line containing %q", c.args, code, stdout, stderr, exitBadInput, c.want)
		}
	}
	// Without --target int8 the LSTM's state is refused the same way.
	code, _, stderr := nicc(t, "compile", saveModel(t, "lstm13.json", lstmModel(13)), "--out", t.TempDir())
	if want := "lstm13.json: model wide_lstm needs 50 bytes of flow state"; code != exitBadInput || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("LSTM without --target: exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
