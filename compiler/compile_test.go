package compiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/verify"
)

// The compile tests build with host gcc and riscv64-unknown-elf-gcc (`go tool task setup`
// installs it); a missing compiler fails them. They verify on testVectors calls, not the
// default 100k, to keep the package's tests fast.
const testVectors = 20_000

const (
	rlccXGB   = "../testdata/models/rlcc_xgb.json"
	rlccRef   = "../testdata/models/rlcc_xgb.ref.csv" // inputs and XGBoost's output, some inputs missing
	lgb       = "../testdata/lightgbm/"
	bcModel   = lgb + "lg_dart_breast_cancer.model"
	bcRows    = lgb + "breast_cancer_test.tsv"
	bcPreds   = lgb + "lg_dart_breast_cancer_true_predictions.txt"
	teacherNN = "../testdata/models/rlcc_teacher.onnx"
)

// compiled caches one compile per configuration for the tests that only read its report; the
// tests run in parallel, and the first to ask for a key compiles it while the others wait.
var compiled sync.Map // key → *compileResult

type compileResult struct {
	once sync.Once
	r    *artifact.CompileReport
	dir  string
	err  error
}

func compileOnce(t *testing.T, key string, opt CompileOptions) (*artifact.CompileReport, string) {
	t.Helper()
	v, _ := compiled.LoadOrStore(key, &compileResult{})
	res := v.(*compileResult)
	res.once.Do(func() {
		res.dir, res.err = os.MkdirTemp("", "nicc-compile-test-")
		if res.err != nil {
			return
		}
		tempDirsMu.Lock()
		tempDirs = append(tempDirs, res.dir) // outlives the test, for the cache; TestMain removes it
		tempDirsMu.Unlock()
		opt.Out = res.dir
		if opt.Vectors == 0 {
			opt.Vectors = testVectors
		}
		res.r, res.err = Compile(opt)
	})
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.r, res.dir
}

var (
	tempDirsMu sync.Mutex
	tempDirs   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func rlccReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "rlcc", CompileOptions{Model: rlccXGB, Ranges: rlccRef, Predictions: rlccRef})
}

// bcReport is the breast-cancer LightGBM's compile on outputVectors vectors and seed 1: the
// compile TestShippedOutputsUnchanged pins as lightgbm_bc, made once for both.
// teacherJSON is the RL-CC teacher in nicc's native JSON.
const teacherJSON = "../testdata/models/rlcc_teacher.json"

func bcReport(t *testing.T) (*artifact.CompileReport, string) {
	return compileOnce(t, "bc", CompileOptions{Model: bcModel, Handler: artifact.HandlerNone, Ranges: bcRows, Predictions: bcPreds,
		Vectors: outputVectors, Seed: 1})
}
func TestCompileRLCC(t *testing.T) {
	t.Parallel()
	r, dir := rlccReport(t)
	if r.Handler != "rlcc" || r.Entry != artifact.EntryHandler {
		t.Errorf("handler %q entry %q, want rlcc (the default for the RL-CC layout) and %s", r.Handler, r.Entry, artifact.EntryHandler)
	}
	v := r.Verify
	if v.Mismatches != 0 || v.UBSan != "clean" || v.Vectors < testVectors || len(v.Compared) != 4 {
		t.Errorf("verify: %+v", v)
	}
	for _, k := range []artifact.VecKind{artifact.VecThreshold, artifact.VecExtreme, artifact.VecSampled, artifact.VecNearThreshold, artifact.VecEvent} {
		if v.Kinds[k.String()] == 0 {
			t.Errorf("no %s vectors: %v", k, v.Kinds)
		}
	}
	// Every split at T-1..T+2, and most events are RTT events.
	if got, want := v.Kinds[artifact.VecThreshold.String()], 4*r.Quant.Splits; got != want {
		t.Errorf("%d threshold vectors, want 4 per split = %d", got, want)
	}
	if v.Events < testVectors/2 || v.RTTEvents < v.Events/2 || v.Sequences < 100 {
		t.Errorf("%d events (%d RTT) in %d sequences", v.Events, v.RTTEvents, v.Sequences)
	}
	for i, in := range r.Inputs {
		rg := nicsdk.RLCCInputRanges(nicsdk.DefaultParams(), nicsdk.DefaultLayout)[i]
		if in.Frac != 16 || in.Min != rg.Min || in.Max != rg.Max {
			t.Errorf("input %d: %+v, want nicsdk's range %+v", i, in, rg)
		}
	}
	b := r.Budget
	if !b.Fits || b.Entry != artifact.EntryHandler || b.Core.Name != "dpa" || b.WCETCycles == 0 || b.Measured == nil {
		t.Errorf("budget: %+v", b)
	}
	if b.Measured.MaxCycles > b.WCETCycles || v.MaxCycles > b.WCETCycles {
		t.Errorf("measured %d / %d cycles above the WCET %d", b.Measured.MaxCycles, v.MaxCycles, b.WCETCycles)
	}
	p := r.PolicyAlone
	if p == nil || p.WCETCycles == 0 || p.WCETCycles >= b.WCETCycles || p.MaxCycles > p.WCETCycles {
		t.Errorf("policy alone %+v, handler WCET %d", p, b.WCETCycles)
	}
	// Any code form, the rank form among them: a compare for each of 4 features and a table
	// add at one cycle; 141 splits and 151 leaves at 2 bytes, or the 112 distinct thresholds
	// at 4.
	if lb := r.LowerBound; lb == nil || lb.Cycles != 5 || lb.Bytes != 448 || p.WCETCycles < lb.Cycles {
		t.Errorf("lower bound %+v (policy WCET %d), want 5 cycles and 448 bytes", lb, p.WCETCycles)
	}
	// The rank form beats nested if/else in the handler within dpa's memory budget.
	if b := r.Build; b.Form != "rank" || !slices.Equal(b.Opt, []string{"-O2"}) || len(b.Candidates) < 2 || b.Candidates[0].Form != "branch" {
		t.Errorf("built %+v, want the rank form at -O2 chosen among candidates", b)
	}
	if r.StateBytes != nicsdk.RLCCBytes || r.StateLimit != 48 || r.CodeBytes == 0 {
		t.Errorf("state %d of %d bytes, code %d bytes", r.StateBytes, r.StateLimit, r.CodeBytes)
	}
	// The firmware's error against the float model at its own inputs is the leaves' and
	// the final rounding's, within quantize's bound plus XGBoost's float32 sums.
	f := r.Fidelity
	if f.Vectors < testVectors/10 || f.Leaves.MaxAbs > r.Quant.ScoreErr+1e-6 || f.Total.RMSE > 1e-4 {
		t.Errorf("fidelity %+v, bound %g", f, r.Quant.ScoreErr)
	}
	if h := r.HandlerFidelity; h == nil || h.Vectors < 1000 || h.Leaves.MaxAbs > r.Quant.ScoreErr+1e-6 || h.Total.RMSE > 0.01 {
		t.Errorf("handler fidelity %+v", h)
	}
	// XGBoost's own predictions, on the reference rows without missing values.
	if tool := r.Tool; tool == nil || tool.Rows != 2024 || tool.SkippedMissing != 64 || tool.Firmware.MaxAbs > r.Quant.ScoreErr+1e-6 || tool.Float.MaxAbs != 0 {
		t.Errorf("vs XGBoost: %+v", tool)
	}
	if v.Kinds[artifact.VecRow.String()] != 2024 {
		t.Errorf("%d row vectors, want the 2024 complete reference rows", v.Kinds[artifact.VecRow.String()])
	}
	for _, name := range []string{"nicc_policy.c", "nicc_policy.h", artifact.HandlerFile, nicsdk.HeaderName, nicsdk.RLCCHeaderName, nicsdk.LinkerScriptName, artifact.FirmwareFile, artifact.ReportFile, "host/driver.c"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	// report.json is the report.
	data, err := os.ReadFile(filepath.Join(dir, artifact.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "handler", "entry", "inputs", "quantization", "verify", "fidelity", "fidelity_handler", "budget", "policy_alone", "code_bytes", "state_bytes"} {
		if _, ok := j[k]; !ok {
			t.Errorf("report.json lacks %q", k)
		}
	}
	if got := j["verify"].(map[string]any)["mismatches"]; got != 0.0 {
		t.Errorf("report.json verify.mismatches = %v", got)
	}
	if got := j["budget"].(map[string]any)["wcet_cycles"]; got != float64(b.WCETCycles) {
		t.Errorf("report.json budget.wcet_cycles = %v, want %d", got, b.WCETCycles)
	}
	t.Logf("%d vectors (%d events), WCET %d cycles (policy alone %d), measured max %d, code %d bytes; fidelity %v / handler %v",
		v.Vectors, v.Events, b.WCETCycles, p.WCETCycles, v.MaxCycles, r.CodeBytes, f.Total, r.HandlerFidelity.Total)
}

func TestCompileLightGBMBinary(t *testing.T) {
	t.Parallel()
	r, dir := bcReport(t)
	if r.Handler != "none" || r.Entry != artifact.EntryPolicy || r.StateBytes != 0 {
		t.Errorf("handler %q entry %q state %d", r.Handler, r.Entry, r.StateBytes)
	}
	if v := r.Verify; v.Mismatches != 0 || v.UBSan != "clean" || v.Vectors < testVectors || v.Kinds[artifact.VecRow.String()] != 57 || v.Events != 0 {
		t.Errorf("verify: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(dir, artifact.HandlerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("handler.c with --handler none: %v", err)
	}
	if !strings.HasPrefix(r.Fidelity.What, "probability") {
		t.Errorf("fidelity of %q, want a probability", r.Fidelity.What)
	}
	// Within 1e-3 in probability of LightGBM's own predictions.
	tool := r.Tool
	if tool == nil || tool.Rows != 57 || tool.Firmware.MaxAbs > 1e-3 || tool.Float.MaxAbs > 1e-12 {
		t.Fatalf("vs LightGBM: %+v", tool)
	}
	for _, in := range r.Inputs {
		if in.Lo >= in.Hi || !strings.Contains(in.Source, "rows") {
			t.Errorf("input %+v", in)
		}
	}
	if !r.Budget.Fits || r.CodeBytes == 0 || r.PolicyAlone != nil {
		t.Errorf("budget %+v, code %d, policy alone %+v", r.Budget, r.CodeBytes, r.PolicyAlone)
	}
	t.Logf("vs LightGBM on 57 rows: %v; vs the float model: %v; WCET %d cycles", tool.Firmware, r.Fidelity.Total, r.Budget.WCETCycles)
}

// Without sample rows, the ranges come from the thresholds alone and still reproduce
// LightGBM's predictions (evaluated afterwards, on the clamped and quantized rows).
func TestCompileLightGBMThresholdRanges(t *testing.T) {
	t.Parallel()
	r, _ := compileOnce(t, "bc-thresholds", CompileOptions{Model: bcModel, Vectors: 5000})
	if r.Handler != "none" || r.Verify.Mismatches != 0 {
		t.Fatalf("handler %s, verify %+v", r.Handler, r.Verify)
	}
	for _, in := range r.Inputs {
		if in.Splits > 0 && in.Source != "thresholds, padded" {
			t.Errorf("input %+v", in)
		}
	}
}

// tamperFirst rewrites the first match of re in the named emitted file.
func tamperFirst(t *testing.T, name string, re *regexp.Regexp, repl func(m []string) string) func(string) error {
	return func(dir string) error {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		loc := re.FindSubmatchIndex(b)
		if loc == nil {
			t.Fatalf("%s has no match of %v", name, re)
		}
		var m []string
		for i := 0; i < len(loc); i += 2 {
			m = append(m, string(b[loc[i]:loc[i+1]]))
		}
		out := append(append(append([]byte{}, b[:loc[0]]...), repl(m)...), b[loc[1]:]...)
		return os.WriteFile(p, out, 0o644)
	}
}

// An integer threshold off by one LSB in the C is caught by the threshold vectors, and the
// error names the first mismatching input and the outputs: in nested if/else here, and in the
// rank form's bucket tables in TestCompileMismatchWritesReport's compile of rlcc_xgb.
func TestCompileCatchesMismatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model, form string
		re          *regexp.Regexp
		repl        string
	}{
		{bcModel, "branch", regexp.MustCompile(`<= (-?\d+)\)`), "<= %d)"},
	} {
		t.Run(filepath.Base(c.model)+"-"+c.form, func(t *testing.T) {
			t.Parallel()
			model := c.model
			opt := CompileOptions{Model: model, Out: t.TempDir(), Vectors: 2000, Form: c.form,
				tamper: tamperFirst(t, "nicc_policy.c", c.re, func(m []string) string {
					n, _ := strconv.ParseInt(m[1], 10, 64)
					return fmt.Sprintf(c.repl, n+1)
				})}
			_, err := Compile(opt)
			var ce *budget.CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("%s: a threshold off by one: %v, want a budget.CheckError", model, err)
			}
			for _, want := range []string{"verify: ", "vectors differ", "threshold±1", "x = [", "golden ", "host C ", "fwsim "} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %q lacks %q", model, err, want)
				}
			}
			t.Log(err)
		})
	}
}

// TestCompileOverBudget: a handler over the budget fails with a budget.CheckError in one line
// and the report, whose report.json records the failure (one compile for both checks).
func TestCompileOverBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: dir, Form: "rank", Vectors: 2000, Budget: 100 * time.Nanosecond})
	var ce *budget.CheckError
	if !errors.As(err, &ce) || r == nil || r.Budget.Fits {
		t.Fatalf("100 ns budget: %v, report %v; want a budget.CheckError and the report", err, r)
	}
	want := regexp.MustCompile(`^nicc_on_event is over budget on dpa: WCET \d+ cycles = 0\.\d{3} µs > budget 0\.1 µs$`)
	if !want.MatchString(err.Error()) {
		t.Errorf("error %q", err)
	}
	got := readReport(t, dir)
	f := got.Failure
	if f == nil || f.Stage != "budget" || f.Kind != "over_budget" || f.Message != err.Error() || r.Failure == nil {
		t.Fatalf("failure %+v, error %v", f, err)
	}
	if got.Budget == nil || got.Budget.Fits || got.Fidelity == nil {
		t.Errorf("an over-budget report keeps what every stage found: budget %+v, fidelity %v", got.Budget, got.Fidelity)
	}
}

func saveModel(t *testing.T, m *model.Model) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.json")
	if err := model.Save(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

// stump is a one-split tree on feature f at threshold thr.
func stump(f int, thr float64) model.Tree {
	return model.Tree{Nodes: []model.Node{
		{Feature: f, Threshold: thr, Cmp: model.CmpLT, Left: 1, Right: 2},
		{Leaf: true, Value: -0.25}, {Leaf: true, Value: 0.5},
	}}
}

func treeModel(inputs []string, trees ...model.Tree) *model.Model {
	return &model.Model{Version: model.NativeVersion, Name: "t", Inputs: inputs, Ensemble: &model.Ensemble{Trees: trees}}
}

// lstm is an RL-CC LSTM with hidden units: h and c do not fit the flow context beside the
// handler's words even at one byte each when hidden > 12.
func lstm(hidden int) *model.Model {
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

func writeText(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad input: a clear one-line error, not a CheckError, before anything is built.
func TestCompileBadInput(t *testing.T) {
	rl := []string{"a_prev", "o", "a_prev2", "o_prev"}
	bc, err := os.ReadFile(bcModel)
	if err != nil {
		t.Fatal(err)
	}
	nanLeaf := regexp.MustCompile(`(?m)^leaf_value=\S+`).ReplaceAllString(string(bc), "leaf_value=nan")
	infThr := regexp.MustCompile(`(?m)^threshold=\S+`).ReplaceAllString(string(bc), "threshold=inf")
	cases := []struct {
		name string
		opt  CompileOptions
		want string
	}{
		{"wider than the handler", CompileOptions{Model: bcModel, Handler: artifact.HandlerRLCC},
			"model lg_dart_breast_cancer has 30 inputs, wider than the RL-CC handler's 4 (a_prev, o, a_prev2, o_prev); compile it with --handler none"},
		{"RL-CC inputs with a bad name", CompileOptions{Model: saveModel(t, treeModel([]string{"o", "a_prev", "a_prev2", "x"}, stump(0, 1))), Handler: artifact.HandlerRLCC},
			`inputs (o, a_prev, a_prev2, x): input 4 "x" is not an RL-CC input name`},
		{"flow state over 48 bytes", CompileOptions{Model: saveModel(t, lstm(16)), Handler: artifact.HandlerRLCC},
			"model wide_lstm needs 56 bytes of flow state (the rlcc handler's 24 + h and c of 16 values each at int8 (32)), over the engine's 48-byte flow context"},
		{"network", CompileOptions{Model: teacherNN},
			"model rlcc_teacher is an mlp network; nicc compile takes tree ensembles: quantize a dense network with --target int"},
		{"NaN leaf", CompileOptions{Model: writeText(t, "nan.model", nanLeaf)}, `leaf_value[0] is "nan", want a finite number`},
		{"Inf threshold", CompileOptions{Model: writeText(t, "inf.model", infThr)}, `threshold[0] is "inf", want a finite number`},
		{"o threshold above the handler's clamp", CompileOptions{Model: saveModel(t, treeModel(rl, stump(0, 1), stump(1, 200)))},
			"tree 1 node 0 splits o at 200, above 127.99998474121094 where the RL-CC handler clamps it: the feature range cannot represent this threshold"},
		{"thresholds the format cannot tell apart", CompileOptions{Model: saveModel(t, treeModel([]string{"x"}, stump(0, 1e12), stump(0, 0.1), stump(0, 0.2)))},
			"feature x: thresholds 0.1 and 0.2 both become raw <= 0: its range"},
		{"predictions without rows", CompileOptions{Model: bcModel, Predictions: bcPreds}, "need the rows they were made on (--ranges)"},
		{"rows of the wrong width", CompileOptions{Model: bcModel, Ranges: "../testdata/models/rlcc_xgb.ref.csv"},
			"rlcc_xgb.ref.csv: rows have 5 values; model lg_dart_breast_cancer takes 30 inputs"},
		{"unknown core", CompileOptions{Model: "../testdata/models/xgb_dart.json", Handler: artifact.HandlerNone, Core: "pentium"}, `no core profile "pentium"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Out = t.TempDir()
			c.opt.Vectors = 1000
			r, err := Compile(c.opt)
			var ce *budget.CheckError
			if err == nil || errors.As(err, &ce) || r != nil {
				t.Fatalf("got %v (report %v), want a bad-input error", err, r)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error:\n%s\nwant one line containing\n%s", err, c.want)
			}
		})
	}
}

// The other shipped ensembles (inputs named f0..f3, so --handler none by default), against
// XGBoost's own outputs in their reference tables (inputs first, the output last).
func TestCompileShippedEnsembles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"xgb_logistic", "xgb_dart"} {
		ref := "../testdata/models/" + name + ".ref.csv"
		r, _ := compileOnce(t, name, CompileOptions{Model: "../testdata/models/" + name + ".json", Ranges: ref, Predictions: ref, Vectors: 5000})
		if r.Handler != "none" || r.Verify.Mismatches != 0 || r.Verify.UBSan != "clean" || !r.Budget.Fits {
			t.Errorf("%s: handler %s, verify %+v, budget %s", name, r.Handler, r.Verify, r.Budget.Verdict)
		}
		if tool := r.Tool; tool == nil || tool.Rows != 2024 || tool.Firmware.MaxAbs > 1e-5 {
			t.Errorf("%s: vs XGBoost %+v", name, tool)
		}
		t.Logf("%s: %s vs XGBoost: %v; WCET %d cycles", name, r.Fidelity.What, r.Tool.Firmware, r.Budget.WCETCycles)
	}
}

// Verify in small batches: sequences never span two runs of a host driver, and the counts
// add up.
func TestCompileBatches(t *testing.T) {
	defer func(n int) { verify.Batch = n }(verify.Batch)
	verify.Batch = 1500
	r, err := Compile(CompileOptions{Model: rlccXGB, Out: t.TempDir(), Form: "walk", Vectors: 8000})
	if err != nil {
		t.Fatal(err)
	}
	v := r.Verify
	sum := 0
	for _, n := range v.Kinds {
		sum += n
	}
	if v.Mismatches != 0 || v.Batches < 5 || sum != v.Vectors || v.Vectors < 8000 || v.Kinds[artifact.VecEvent.String()] != v.Events {
		t.Errorf("verify %+v", v)
	}
}

// BenchmarkCycles is the cycles benchmark of the shipped XGBoost 10×4 ensemble on the dpa
// core (not a timing of nicc): the WCET of the whole RL-CC event handler and of the trees
// alone (nicc_policy) in the form compile chooses, and of the nested if/else candidate's, as
// metrics. Run it with
// go test -run '^$' -bench Cycles ./compiler.
func BenchmarkCycles(b *testing.B) {
	var r *artifact.CompileReport
	for b.Loop() {
		var err error
		if r, err = Compile(CompileOptions{Model: rlccXGB, Out: b.TempDir(), Vectors: 2000}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Budget.WCETCycles), "handler-wcet-cycles")
	b.ReportMetric(float64(r.PolicyAlone.WCETCycles), "trees-wcet-cycles")
	b.ReportMetric(float64(r.Build.Candidates[0].PolicyWCET), "branch-trees-wcet-cycles")
	b.ReportMetric(float64(r.CodeBytes), "text-bytes")
	b.ReportMetric(float64(r.RodataBytes), "rodata-bytes")
}
